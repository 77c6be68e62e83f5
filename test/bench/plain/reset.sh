# Puts a fresh copy of a prepared folder in place before a timed run (hyperfine --prepare).
# Usage: bash reset.sh TEMPLATE DEST
set -euo pipefail
rm -rf "$2"
cp -a "$1" "$2"
