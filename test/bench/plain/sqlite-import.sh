# The plain-tool record of a JSON Lines file of outputs: sqlite3 imports every line and keeps the
# first output per job ID, in one transaction, durable (WAL, synchronous=FULL) before it exits.
# Usage: bash sqlite-import.sh DB JSONL
set -euo pipefail
db=$1 jsonl=$2
sqlite3 "$db" >/dev/null <<SQL
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE IF NOT EXISTS outputs (job_id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TEMP TABLE lines (line TEXT);
.mode ascii
.separator "\037" "\n"
.import '$jsonl' lines
INSERT OR IGNORE INTO outputs SELECT json_extract(line, '\$.jobId'), line FROM lines;
SQL
