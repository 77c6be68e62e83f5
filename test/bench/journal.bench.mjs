// Journal benchmark: record latency next to a raw better-sqlite3 insert of the same bytes in the same
// run, and record + claim p99 at 10k and at 1M outputs. Prints one JSON object (see run.mjs).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openJournal } from "@idem/journal";
import Database from "better-sqlite3";

const N = Number(process.env.BENCH_N ?? 2000);
const BIG = Number(process.env.BENCH_BIG ?? 1_000_000);
const payload = "x".repeat(1024 - 120);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const us = (t0) => Number(process.hrtime.bigint() - t0) / 1000;
const output = (i, tag) => ({
  jobId: `${tag}-${String(i).padStart(8, "0")}`,
  agent: "writer",
  effects: [{ kind: "file.write", root: "out", path: `f${i}.txt`, content: payload }],
});

function rawInsert(dir, sync) {
  const db = new Database(join(dir, `raw-${sync}.db`));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${sync}`);
  db.exec("CREATE TABLE t (job_id TEXT PRIMARY KEY, body TEXT NOT NULL)");
  const ins = db.prepare("INSERT INTO t (job_id, body) VALUES (?, ?)");
  const lat = [];
  for (let i = 0; i < N; i++) {
    const body = JSON.stringify(output(i, "raw"));
    const t0 = process.hrtime.bigint();
    ins.run(`raw-${i}`, body);
    lat.push(us(t0));
  }
  db.close();
  return lat;
}

/**
 * The floor of the record contract in raw SQL: the rows one record must write in one transaction
 * (the output, its generation-1 run, the run's target, the output.recorded event), with the
 * journal's own tables and indexes (a journal file, written with prepared statements in a
 * better-sqlite3 transaction, nothing else: no hashing, no canonical JSON, no lock polling).
 */
async function rawRecordRows(dir, sync) {
  const path = join(dir, `floor-${sync}.db`);
  await (await openJournal(path, { synchronous: "NORMAL" })).close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${sync}`);
  const insO = db.prepare(
    "INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at) VALUES (?, 'writer', ?, ?, 'bench', ?)",
  );
  const insR = db.prepare(
    "INSERT INTO runs (job_id, generation, state, due_at, targets, created_at, updated_at) VALUES (?, 1, 'pending', ?, '[\"root:out\"]', ?, ?) RETURNING id",
  );
  const insT = db.prepare("INSERT INTO active_targets (target, run_id) VALUES ('root:out', ?)");
  const insE = db.prepare(
    "INSERT INTO events (at, job_id, type, data, actor) VALUES (?, ?, 'output.recorded', ?, 'bench')",
  );
  const one = db.transaction((id, body, now) => {
    insO.run(id, "h".repeat(64), body, now);
    const r = insR.get(id, now, now, now);
    insT.run(r.id);
    insE.run(now, id, '{"source":"bench"}');
  });
  const lat = [];
  for (let i = 0; i < N; i++) {
    const o = output(i, "floor");
    const body = JSON.stringify(o);
    const t0 = process.hrtime.bigint();
    one(o.jobId, body, Date.now());
    lat.push(us(t0));
  }
  db.close();
  return lat;
}

async function journalRecord(dir, sync) {
  const j = await openJournal(join(dir, `journal-${sync}.db`), { synchronous: sync });
  const lat = [];
  for (let i = 0; i < N; i++) {
    const o = output(i, "rec");
    const t0 = process.hrtime.bigint();
    await j.outputs.record(o, { source: "bench", targets: ["root:out"] });
    lat.push(us(t0));
  }
  await j.close();
  return lat;
}

/** Fills a journal with `n` outputs whose runs are done (history), in big transactions. */
function fill(path, n) {
  const db = new Database(path);
  db.pragma("synchronous = OFF");
  const now = Date.now();
  const insO = db.prepare(
    "INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at) VALUES (?, 'writer', ?, ?, 'bench', ?)",
  );
  const insR = db.prepare(
    "INSERT INTO runs (job_id, generation, state, targets, created_at, updated_at) VALUES (?, 1, 'done', '[\"root:out\"]', ?, ?)",
  );
  const body = JSON.stringify(output(0, "hist"));
  const batch = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      insO.run(`hist-${String(i).padStart(8, "0")}`, "h", body, now);
      insR.run(`hist-${String(i).padStart(8, "0")}`, now, now);
    }
  });
  for (let i = 0; i < n; i += 50_000) batch(i, Math.min(n, i + 50_000));
  db.close();
}

async function atScale(dir, n) {
  const path = join(dir, `scale-${n}.db`);
  await (await openJournal(path)).close();
  fill(path, n);
  const j = await openJournal(path, { synchronous: "FULL" });
  const rec = [];
  const claim = [];
  for (let i = 0; i < 1000; i++) {
    let t0 = process.hrtime.bigint();
    await j.outputs.record(output(i, `s${n}`), { source: "bench", targets: ["root:out"] });
    rec.push(us(t0));
    t0 = process.hrtime.bigint();
    const c = await j.runs.claim({ owner: "bench", leaseMs: 60_000, maxLeaseExpiries: 50 });
    claim.push(us(t0));
    await j.runs.complete(c.lease);
  }
  await j.close();
  return { rec, claim };
}

const dir = mkdtempSync(join(tmpdir(), "idem-bench-journal-"));
try {
  const rawFull = rawInsert(dir, "FULL");
  const recFull = await journalRecord(dir, "FULL");
  const floorFull = await rawRecordRows(dir, "FULL");
  const rawNormal = rawInsert(dir, "NORMAL");
  const recNormal = await journalRecord(dir, "NORMAL");
  const small = await atScale(dir, 10_000);
  const big = await atScale(dir, BIG);
  const r = (metric, value, raw, target, unit = "µs") => ({
    metric,
    value: Math.round(value),
    raw: raw === null ? null : Math.round(raw),
    unit,
    ratio: raw === null ? null : Number((value / raw).toFixed(2)),
    target,
  });
  const results = [
    r("record p50, FULL (vs raw insert p50)", pct(recFull, 50), pct(rawFull, 50), "≤ 1.3x"),
    r("record p99, FULL (vs raw insert p99)", pct(recFull, 99), pct(rawFull, 99), "≤ 1.3x"),
    r(
      "record p50, FULL (vs the same rows in one raw transaction: the contract's floor)",
      pct(recFull, 50),
      pct(floorFull, 50),
      "informational",
    ),
    r(
      "the contract's floor p50, FULL (vs raw insert p50)",
      pct(floorFull, 50),
      pct(rawFull, 50),
      "informational",
    ),
    r("record p50, NORMAL (vs raw insert p50)", pct(recNormal, 50), pct(rawNormal, 50), "-"),
    r("record p99, NORMAL (vs raw insert p99)", pct(recNormal, 99), pct(rawNormal, 99), "-"),
    r(`record p99 at ${BIG} outputs (vs at 10k)`, pct(big.rec, 99), pct(small.rec, 99), "≤ 1.5x"),
    r(
      `claim p99 at ${BIG} outputs (vs at 10k)`,
      pct(big.claim, 99),
      pct(small.claim, 99),
      "≤ 1.5x",
    ),
    r("claim p50 at 10k outputs", pct(small.claim, 50), null, "-"),
  ];
  process.stdout.write(
    `${JSON.stringify({ name: "journal", command: "node test/bench/journal.bench.mjs", results }, null, 2)}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
