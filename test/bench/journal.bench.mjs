// Journal benchmark: record latency next to a raw better-sqlite3 insert of the same bytes and to the
// contract's floor (the same rows in one raw transaction), all in this process, in interleaved
// rounds; and record and claim p99 at 1M outputs against the same at 10k, interleaved too.
// The PostgreSQL column (lib/journal-pg.mjs) measures the same on a disposable server of its own.
// Usage: node test/bench/journal.bench.mjs   (BENCH_N, BENCH_BIG, BENCH_PG_BIG; BENCH_PG=0 skips
// PostgreSQL, BENCH_ONLY=pg skips SQLite, BENCH_PG_SCALE=0 skips PostgreSQL's rows at scale;
// BENCH_QUICK=1: a smoke run)
// Prints one JSON object (see run.mjs).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { postgresBinDir } from "@idem/testing";
import Database from "better-sqlite3";
import { postgresRows } from "./lib/journal-pg.mjs";
import { figure, interleave, median, pct, QUICK, ROUNDS, report, row } from "./lib/measure.mjs";

const N = Number(process.env.BENCH_N ?? (QUICK ? 200 : 2000));
const BIG = Number(process.env.BENCH_BIG ?? (QUICK ? 50_000 : 1_000_000));
const PER = Math.ceil(N / ROUNDS);
const SCALE_PER = QUICK ? 50 : 200;
const PG_BIG = Number(process.env.BENCH_PG_BIG ?? (QUICK ? 20_000 : 1_000_000));
const PG = process.env.BENCH_PG !== "0" && postgresBinDir() !== undefined;
const SQLITE = process.env.BENCH_ONLY !== "pg";
const payload = "x".repeat(1024 - 120);
const us = (t0) => Number(process.hrtime.bigint() - t0) / 1000;
const output = (i, tag) => ({
  jobId: `${tag}-${String(i).padStart(8, "0")}`,
  agent: "writer",
  effects: [{ kind: "file.write", root: "out", path: `f${i}.txt`, content: payload }],
});
const dir = mkdtempSync(join(tmpdir(), "idem-bench-journal-"));

/** Each side keeps its own file from round to round; a call writes `k` more rows and answers their latencies. */
function rawInsert(sync) {
  const db = new Database(join(dir, `raw-${sync}.db`));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${sync}`);
  db.exec("CREATE TABLE t (job_id TEXT PRIMARY KEY, body TEXT NOT NULL)");
  const ins = db.prepare("INSERT INTO t (job_id, body) VALUES (?, ?)");
  let i = 0;
  return {
    step: async (k) => {
      const lat = [];
      for (const end = i + k; i < end; i++) {
        const body = JSON.stringify(output(i, "raw"));
        const t0 = process.hrtime.bigint();
        ins.run(`raw-${i}`, body);
        lat.push(us(t0));
      }
      return lat;
    },
    close: () => db.close(),
  };
}

/**
 * The floor of the record contract in raw SQL: the rows one record must write in one transaction
 * (the output, its generation-1 run, the run's target, the output.recorded event), with the
 * journal's own tables and indexes, prepared statements in a better-sqlite3 transaction, nothing
 * else: no hashing, no canonical JSON, no lock polling.
 */
async function rawRecordRows(sync) {
  const path = join(dir, `floor-${sync}.db`);
  await (await openSqliteJournal(path, { synchronous: "NORMAL" })).close();
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
  let i = 0;
  return {
    step: async (k) => {
      const lat = [];
      for (const end = i + k; i < end; i++) {
        const o = output(i, "floor");
        const body = JSON.stringify(o);
        const t0 = process.hrtime.bigint();
        one(o.jobId, body, Date.now());
        lat.push(us(t0));
      }
      return lat;
    },
    close: () => db.close(),
  };
}

async function journalRecord(sync) {
  const j = await openSqliteJournal(join(dir, `journal-${sync}.db`), { synchronous: sync });
  let i = 0;
  return {
    step: async (k) => {
      const lat = [];
      for (const end = i + k; i < end; i++) {
        const o = output(i, "rec");
        const t0 = process.hrtime.bigint();
        await j.outputs.record(o, { source: "bench", targets: ["root:out"] });
        lat.push(us(t0));
      }
      return lat;
    },
    close: () => j.close(),
  };
}

/** A journal holding `n` outputs whose runs are done (history), filled in big raw transactions. */
async function scaled(n) {
  const path = join(dir, `scale-${n}.db`);
  await (await openSqliteJournal(path)).close();
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
  // The fill (synchronous OFF) written back now, not by the kernel inside the measured fsyncs.
  spawnSync("sync");
  const j = await openSqliteJournal(path, { synchronous: "FULL" });
  let i = 0;
  return {
    /** `k` records, each followed by a claim and complete of its run: { rec, claim } latencies. */
    step: async (k) => {
      const rec = [];
      const claim = [];
      for (const end = i + k; i < end; i++) {
        let t0 = process.hrtime.bigint();
        await j.outputs.record(output(i, `s${n}`), { source: "bench", targets: ["root:out"] });
        rec.push(us(t0));
        t0 = process.hrtime.bigint();
        const c = await j.runs.claim({ owner: "bench", leaseMs: 60_000, maxLeaseExpiries: 50 });
        claim.push(us(t0));
        await j.runs.complete(c.lease);
      }
      return { rec, claim };
    },
    close: () => j.close(),
  };
}

/** The SQLite rows: record against the raw insert and the floor, record and claim at scale. */
async function sqliteRows() {
  const sides = {
    rawFull: rawInsert("FULL"),
    recFull: await journalRecord("FULL"),
    floorFull: await rawRecordRows("FULL"),
    rawNormal: rawInsert("NORMAL"),
    recNormal: await journalRecord("NORMAL"),
  };
  const lat = await interleave(
    "journal record",
    Object.fromEntries(Object.entries(sides).map(([k, s]) => [k, (r) => s.step(r < 0 ? 50 : PER)])),
  );
  for (const s of Object.values(sides)) await s.close();
  const p = (k, q) => lat[k].map((xs) => pct(xs, q));
  const small = await scaled(10_000);
  const big = await scaled(BIG);
  const sc = await interleave("journal at scale", {
    small: (r) => small.step(r < 0 ? 20 : SCALE_PER),
    big: (r) => big.step(r < 0 ? 20 : SCALE_PER),
  });
  await small.close();
  await big.close();
  const sp = (k, f, q) => sc[k].map((x) => pct(x[f], q));
  const rawBase =
    "better-sqlite3 in this process: INSERT INTO t (job_id, body) of the same ~1 KB JSON, one row per transaction, WAL";
  // The contract's floor (the same rows in one raw transaction) against the raw insert: when the
  // floor alone is over the target, no record can be under it.
  const floorOver = (q) => {
    const f = median(p("floorFull", q).map((v, i) => v / p("rawFull", q)[i]));
    return f > 1.3
      ? `the contract's floor (the rows a record writes, in one raw transaction) is itself ${f.toFixed(2)}x the raw insert at p${q} here (issue 2)`
      : undefined;
  };
  const p50Blocked = floorOver(50);
  const p99Blocked = floorOver(99);
  const results = [
    row({
      metric: "record p50, FULL",
      unit: "µs",
      idem: p("recFull", 50),
      base: p("rawFull", 50),
      baseline: `${rawBase}, synchronous=FULL (p50)`,
      target: { max: 1.3, ...(p50Blocked && { blocked: p50Blocked }) },
    }),
    row({
      metric: "record p99, FULL",
      unit: "µs",
      idem: p("recFull", 99),
      base: p("rawFull", 99),
      baseline: `${rawBase}, synchronous=FULL (p99)`,
      target: { max: 1.3, ...(p99Blocked && { blocked: p99Blocked }) },
    }),
    row({
      metric: "record p50, FULL, against the contract's floor",
      unit: "µs",
      idem: p("recFull", 50),
      base: p("floorFull", 50),
      baseline:
        "the rows one record writes (output, run, target, event) in one raw transaction, FULL (p50)",
    }),
    row({
      metric: "the contract's floor p50, FULL, against the raw insert",
      unit: "µs",
      idem: p("floorFull", 50),
      base: p("rawFull", 50),
      baseline: `${rawBase}, synchronous=FULL (p50)`,
    }),
    row({
      metric: "record p50, NORMAL",
      unit: "µs",
      idem: p("recNormal", 50),
      base: p("rawNormal", 50),
      baseline: `${rawBase}, synchronous=NORMAL (p50)`,
    }),
    row({
      metric: "record p99, NORMAL",
      unit: "µs",
      idem: p("recNormal", 99),
      base: p("rawNormal", 99),
      baseline: `${rawBase}, synchronous=NORMAL (p99)`,
    }),
    row({
      metric: `record p99 at ${BIG} outputs, against idem at 10k`,
      unit: "µs",
      idem: sp("big", "rec", 99),
      base: sp("small", "rec", 99),
      baseline: "idem's own record p99 on a journal of 10,000 outputs",
      target: { max: 1.5 },
    }),
    row({
      metric: `claim p99 at ${BIG} outputs, against idem at 10k`,
      unit: "µs",
      idem: sp("big", "claim", 99),
      base: sp("small", "claim", 99),
      baseline: "idem's own claim p99 on a journal of 10,000 outputs",
      target: { max: 1.5 },
    }),
    figure({ metric: "claim p50 at 10k outputs", unit: "µs", values: sp("small", "claim", 50) }),
  ];
  const notes = [
    `SQLite rows: ${ROUNDS} interleaved rounds after a warm-up; each round writes ${PER} rows on each of five sides (raw insert FULL, record FULL, floor FULL, raw insert NORMAL, record NORMAL), each side on its own file kept from round to round; a round's p50 and p99 are over its ${PER} writes. The scale rows: ${SCALE_PER} record + claim + complete per round on a journal of 10,000 and of ${BIG} outputs (history filled in raw transactions), interleaved the same way.`,
  ];
  return { results, notes };
}

try {
  const results = [];
  const sqliteNotes = [];
  if (SQLITE) {
    const rows = await sqliteRows();
    results.push(...rows.results);
    sqliteNotes.push(...rows.notes);
  } else sqliteNotes.push("SQLite rows skipped (BENCH_ONLY=pg).");
  const pgNotes = [];
  if (PG) {
    // The SQLite rows' pages (a 1M-output journal) written back first, not inside the PostgreSQL
    // rounds' fsyncs: their p99 at scale doubled when they were.
    spawnSync("sync");
    const pgRows = await postgresRows({
      output,
      per: PER,
      tputPer: QUICK ? 10 : 50,
      // p99 over 400 record+claim per round and size (the 4th-worst), not 200 (the 2nd-worst):
      // one stall of a busy machine is not the figure, on both sizes alike.
      scalePer: QUICK ? 30 : 2 * SCALE_PER,
      big: PG_BIG,
      scale: process.env.BENCH_PG_SCALE !== "0",
    });
    results.push(...pgRows.results);
    pgNotes.push(...pgRows.notes);
  } else {
    pgNotes.push(
      process.env.BENCH_PG === "0"
        ? "PostgreSQL rows skipped (BENCH_PG=0)."
        : "PostgreSQL rows skipped: no initdb/pg_ctl under /usr/lib/postgresql (apt-get install postgresql).",
    );
  }
  report({
    name: "journal",
    command: "node test/bench/journal.bench.mjs",
    results,
    notes: [...sqliteNotes, ...pgNotes],
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
