// The PostgreSQL driver choice, measured (issue 18): node-postgres (`pg`) against `postgres`
// (porsager) on a disposable PostgreSQL of this machine (fsync and synchronous_commit on), in
// interleaved rounds: single-row INSERT latency (one connection, autocommit, so each insert is one
// durable COMMIT) p50/p99, and the rows per second of 16 concurrent writers (a pool of 16).
// Not a *.bench.mjs: `npm run bench` does not run it; run it by hand after `npm run build`:
//   node test/bench/pg-driver.mjs                 (PG_BENCH_N inserts per side and round, default 400)
// A driver that is not installed in the workspace is looked up in PG_DRIVERS_DIR (a directory with a
// node_modules holding it), else skipped with a note.
import { createRequire } from "node:module";
import { join } from "node:path";
import { startPostgres } from "@idem/testing";

const N = Number(process.env.PG_BENCH_N ?? 400);
const ROUNDS = Number(process.env.PG_BENCH_ROUNDS ?? 4);
const WRITERS = 16;
const payload = "x".repeat(900);

async function load(name) {
  try {
    return await import(name);
  } catch {
    if (!process.env.PG_DRIVERS_DIR) return undefined;
    const req = createRequire(join(process.env.PG_DRIVERS_DIR, "package.json"));
    try {
      return await import(req.resolve(name));
    } catch {
      return undefined;
    }
  }
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const now = () => Number(process.hrtime.bigint()) / 1e6;

const DDL =
  "CREATE TABLE IF NOT EXISTS t (seq bigserial PRIMARY KEY, job_id text NOT NULL UNIQUE, body text NOT NULL)";
const INSERT = "INSERT INTO t (job_id, body) VALUES ($1, $2)";

/** A side: open(url, max) -> { ddl(), insert(jobId), close() }. */
const sides = {
  pg: async (mod) => {
    const pg = mod.default ?? mod;
    return async (url, max) => {
      const pool = new pg.Pool({ connectionString: url, max });
      // An idle client's error (the server shutting down at the end) must not crash the process.
      pool.on("error", () => {});
      return {
        ddl: () => pool.query(DDL),
        insert: (id) => pool.query({ name: "ins", text: INSERT, values: [id, payload] }),
        close: () => pool.end(),
      };
    };
  },
  postgres: async (mod) => {
    const postgres = mod.default ?? mod;
    return async (url, max) => {
      const sql = postgres(url, { max, onnotice: () => {} });
      return {
        ddl: () => sql.unsafe(DDL),
        insert: (id) => sql.unsafe(INSERT, [id, payload], { prepare: true }),
        close: () => sql.end(),
      };
    };
  },
};

const pg = await startPostgres();
try {
  const open = {};
  for (const [name, make] of Object.entries(sides)) {
    const mod = await load(name);
    if (mod) open[name] = await make(mod);
    else process.stderr.write(`${name}: not installed, skipped (set PG_DRIVERS_DIR)\n`);
  }
  const names = Object.keys(open);
  const urls = {};
  for (const n of names) {
    urls[n] = await pg.createDatabase(`bench_${n}`);
    const c = await open[n](urls[n], 1);
    await c.ddl();
    await c.close();
  }
  const lat = Object.fromEntries(names.map((n) => [n, []]));
  const tput = Object.fromEntries(names.map((n) => [n, []]));
  let serial = 0;
  for (let round = -1; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const n of order) {
      // single writer: one connection, each insert its own durable commit
      const one = await open[n](urls[n], 1);
      const ms = [];
      for (let i = 0; i < N; i++) {
        const t0 = now();
        await one.insert(`s-${serial++}`);
        ms.push(now() - t0);
      }
      await one.close();
      // 16 writers: a pool of 16, each writer inserting in turn
      const many = await open[n](urls[n], WRITERS);
      await Promise.all(Array.from({ length: WRITERS }, () => many.insert(`w-${serial++}`)));
      const per = Math.ceil((N * 2) / WRITERS);
      const t0 = now();
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          for (let i = 0; i < per; i++) await many.insert(`m-${serial++}`);
        }),
      );
      const elapsed = now() - t0;
      await many.close();
      if (round >= 0) {
        lat[n].push(...ms);
        tput[n].push((per * WRITERS * 1000) / elapsed);
      }
    }
  }
  const result = {};
  for (const n of names) {
    const s = [...tput[n]].sort((a, b) => a - b);
    result[n] = {
      insertP50Ms: Number(pct(lat[n], 50).toFixed(3)),
      insertP99Ms: Number(pct(lat[n], 99).toFixed(3)),
      writers16RowsPerSec: Math.round(s[Math.floor(s.length / 2)]),
      writers16Min: Math.round(s[0]),
      writers16Max: Math.round(s[s.length - 1]),
    };
  }
  process.stdout.write(
    `${JSON.stringify({ n: N, rounds: ROUNDS, writers: WRITERS, result }, null, 2)}\n`,
  );
} finally {
  await pg.stop();
}
