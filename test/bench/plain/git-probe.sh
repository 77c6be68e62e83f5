# The plain-tool probe: is the commit carrying "Idem-Effect: KEY" on BRANCH? One git process per
# question, as a person or a script asks it.
# The key is matched as a whole trailer line (a basic regular expression anchored at both ends).
# Usage: bash git-probe.sh REPO BRANCH KEY REPS log|rev-list [cold]
# Prints the microseconds of each of REPS calls, one per line. `cold` writes the page cache back and
# drops it before each call (untimed; needs root).
set -euo pipefail
repo=$1 branch=$2 key=$3 reps=$4 how=$5 cold=${6:-}
for ((r = 0; r < reps; r++)); do
  if [[ $cold == cold ]]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
  fi
  t0=$EPOCHREALTIME
  if [[ $how == log ]]; then
    git -C "$repo" log -1 --format=%H --grep="^Idem-Effect: $key\$" "$branch" -- >/dev/null
  else
    git -C "$repo" rev-list -1 --grep="^Idem-Effect: $key\$" "$branch" -- >/dev/null
  fi
  t1=$EPOCHREALTIME
  echo $((${t1/./} - ${t0/./}))
done
