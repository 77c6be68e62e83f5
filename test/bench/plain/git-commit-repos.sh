# The plain-tool loop over several repositories (the scaling bench's raw limit): COUNT commits, one
# new 1 KB file each (`jobs/raw-<i>.txt`), `git add` + `git commit -q`, the repositories taken in
# turn. Four of these at once over 16 repositories (four each) is what the machine reaches with no
# engine. Usage: bash git-commit-repos.sh COUNT CONTENT_FILE REPO... ; prints the microseconds.
set -euo pipefail
count=$1 content=$2
shift 2
repos=("$@")
t0=$EPOCHREALTIME
for ((i = 0; i < count; i++)); do
  repo=${repos[$((i % ${#repos[@]}))]}
  cp "$content" "$repo/jobs/raw-$i.txt"
  git -C "$repo" -c maintenance.auto=false add "jobs/raw-$i.txt"
  git -C "$repo" -c maintenance.auto=false commit -q -m "raw $i"
done
t1=$EPOCHREALTIME
echo $((${t1/./} - ${t0/./}))
