# The plain-tool scan that reads every Idem-Effect key of a branch once (what a person does to
# check many keys at once): one `git log` of the branch, messages of the commits carrying a trailer.
# Usage: bash git-scan.sh REPO BRANCH REPS [cold]
# Prints the microseconds of each of REPS scans, one per line; `cold` drops the page cache first.
set -euo pipefail
repo=$1 branch=$2 reps=$3 cold=${4:-}
for ((r = 0; r < reps; r++)); do
  if [[ $cold == cold ]]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
  fi
  t0=$EPOCHREALTIME
  git -C "$repo" log --format=%H%x00%B%x00 --grep='^Idem-Effect:' "$branch" -- >/dev/null
  t1=$EPOCHREALTIME
  echo $((${t1/./} - ${t0/./}))
done
