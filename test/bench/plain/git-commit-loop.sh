# The plain-tool loop for git.commit: one new file per commit, `git add` + `git commit -q`.
# Usage: bash git-commit-loop.sh REPO FROM COUNT [git options, e.g. -c core.fsync=loose-object,reference]
# Commits f$FROM.txt .. f$((FROM+COUNT-1)).txt (each holding its number) on the checked-out branch,
# and prints the microseconds the loop took. Auto maintenance is off, as idem runs it: a `git commit`
# otherwise starts `git maintenance run --auto`, a second process that has nothing to do at this size.
set -euo pipefail
repo=$1 from=$2 count=$3
shift 3
cd "$repo"
t0=$EPOCHREALTIME
for ((i = from; i < from + count; i++)); do
  echo "$i" >"f$i.txt"
  git -c maintenance.auto=false "$@" add "f$i.txt"
  git -c maintenance.auto=false "$@" commit -q -m "raw $i"
done
t1=$EPOCHREALTIME
echo $((${t1/./} - ${t0/./}))
