import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres } from "@idem/testing";
import pg from "pg";
import { rng } from "../../chaos/lib/drill-kit.mjs";
import { throughputRun } from "./lib/runs.mjs";
import { dbosSystem } from "./systems/dbos.mjs";
import { idemSystem } from "./systems/idem.mjs";

const B = mkdtempSync(join(tmpdir(), "h49-probe-"));
const server = await startPostgres();
const which = process.argv[2] ?? "idem";
const url = await server.createDatabase("probe");
const c = new pg.Client({ connectionString: url });
await c.connect();
const stat = async () =>
  (
    await c.query(
      "select xact_commit, tup_inserted, tup_updated, tup_deleted, tup_returned, tup_fetched from pg_stat_database where datname='probe'",
    )
  ).rows[0];
const wal = async () =>
  (await c.query("select wal_records, wal_bytes, wal_sync from pg_stat_wal")).rows[0];
const dir = join(B, "run");
mkdirSync(dir);
const sys =
  which === "idem"
    ? idemSystem({
        dir,
        journal: "postgres",
        pgUrl: url,
        logFile: join(B, "log"),
        random: rng(1),
        pgPid: () => server.pid,
      })
    : dbosSystem({
        dir,
        commit: "git",
        pgUrl: url,
        concurrency: 32,
        logFile: join(B, "log"),
        random: rng(1),
        pollMs: 50,
        pgPid: () => server.pid,
      });
const n = Number(process.argv[3] ?? 200);
const s0 = await stat();
const w0 = await wal();
const r = await throughputRun(sys, { n });
const s1 = await stat();
const w1 = await wal();
const per = {};
for (const k of Object.keys(s0)) per[k] = ((Number(s1[k]) - Number(s0[k])) / n).toFixed(1);
const pw = {};
for (const k of Object.keys(w0)) pw[k] = ((Number(w1[k]) - Number(w0[k])) / n).toFixed(1);
console.log(which, r.rate, r.cpuPerJobMs, per, pw, r.error);
await c.end();
await server.stop();
