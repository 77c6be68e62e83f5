# The plain-tool loop for git.patch: `git apply --index` + `git commit -q` per patch file.
# Usage: bash git-patch-loop.sh REPO PATCHDIR FROM COUNT [git options]
# Applies PATCHDIR/$i.patch for i in FROM .. FROM+COUNT-1 and prints the microseconds the loop took.
set -euo pipefail
repo=$1 patches=$2 from=$3 count=$4
shift 4
cd "$repo"
t0=$EPOCHREALTIME
for ((i = from; i < from + count; i++)); do
  git -c maintenance.auto=false "$@" apply --index "$patches/$i.patch"
  git -c maintenance.auto=false "$@" commit -q -m "raw patch $i"
done
t1=$EPOCHREALTIME
echo $((${t1/./} - ${t0/./}))
