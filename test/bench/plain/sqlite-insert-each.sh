# As sqlite-import.sh, but one transaction per output (each line recorded, durable, on its own, as
# idem answers each output of a batch): one INSERT per line through one sqlite3 process.
# Usage: bash sqlite-insert-each.sh DB JSONL
set -euo pipefail
db=$1 jsonl=$2
{
  echo "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
  echo "CREATE TABLE IF NOT EXISTS outputs (job_id TEXT PRIMARY KEY, body TEXT NOT NULL);"
  sed "s/'/''/g; s/.*/INSERT OR IGNORE INTO outputs SELECT json_extract(x, '\$.jobId'), x FROM (SELECT '&' AS x);/" "$jsonl"
} | sqlite3 "$db" >/dev/null
