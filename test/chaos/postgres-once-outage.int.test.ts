// `idem interpreter --once` through PostgreSQL outages (issue 18), 40 outputs (a commit, a patch and a
// file write each) on one target. The test holds the first run itself, so the drain starts idle,
// waiting for it; the disposable server is SIGKILLed then (the drain's reads of what is left fail),
// and started again. The test releases its run; once the drain is under way the server is
// SIGKILLed again, for longer than every run lease, and started again. The same `--once` process
// rides out both: it stops claiming, resumes by itself, drains and exits 0 with no run dead;
// afterwards every run is done and every effect is at its target once.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { PostgresJournalStore } from "@idem/journal";
import { ignoreServerShutdown, startPostgres, tempDir } from "@idem/testing";
import pg_ from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLEAN,
  createWorkspace,
  IDEM_BIN,
  mixedOutput,
  REPO_ROOT,
  recordAll,
  sleep,
  verify,
  waitFor,
} from "./interpreter-fixture.js";

const OUTPUTS = 40;
const LEASE_MS = 2_000;

let pg: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  if (!process.env.SKIPB)
    execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

describe("idem interpreter --once during a PostgreSQL outage", () => {
  it("waits for the server, resumes by itself, drains every run and exits 0 with each effect once", async () => {
    await using dir = await tempDir("idem-pg-once-");
    const url = await pg.createDatabase("once_outage");
    const ws = await createWorkspace(
      dir.path,
      { leaseMs: LEASE_MS, pollMs: 50 },
      { journal: { url } },
    );
    const outputs = Array.from({ length: OUTPUTS }, (_, i) => mixedOutput(`o-${i}`));
    const journal = await PostgresJournalStore.open(url, { max: 2 });
    const e: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1" };
    for (const k of Object.keys(e)) if (k.startsWith("OTEL_") || k === "NATS_URL") delete e[k];
    for (const k of ["IDEM_JOURNAL_URL", "IDEM_FAULT", "IDEM_PAUSE"]) delete e[k];
    let child: ChildProcess | undefined;
    let admin = new pg_.Pool({ connectionString: url, max: 1 });
    admin.on("error", ignoreServerShutdown);
    try {
      await recordAll(journal, ws.config, outputs);
      const held = await journal.runs.claim({
        owner: "test",
        leaseMs: 600_000,
        maxLeaseExpiries: 5,
      });
      expect(held?.run.jobId).toBe("o-0");
      if (!held) return;
      child = spawn(
        process.execPath,
        [IDEM_BIN, "interpreter", "--once", "--json", "--config", ws.configFile],
        { env: e, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (d) => {
        stdout += d;
      });
      child.stderr?.on("data", (d) => {
        stderr += d;
      });
      const exited = new Promise<number | null>((r) => child?.once("exit", (c) => r(c)));
      /** The server SIGKILLed, down for longer than every run lease, started again; the drain waits. */
      const outage = async () => {
        await admin.end();
        await pg.kill();
        expect(child?.exitCode, "the drain ended before the outage: no outage seen").toBeNull();
        await sleep(3 * LEASE_MS);
        expect(child?.exitCode, `--once gave up during the outage: ${stderr}`).toBeNull();
        await pg.restart();
        admin = new pg_.Pool({ connectionString: url, max: 1 });
        admin.on("error", ignoreServerShutdown);
      };

      // 1. Idle: waiting on the test's run (its LISTEN session is how we know it waits).
      await waitFor(
        "the drain to wait for the held run",
        async () => {
          const { rows } = await admin.query(
            "SELECT 1 FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
          );
          return rows.length > 0;
        },
        { timeoutMs: 240_000, ignoreErrors: true },
      );
      await outage();
      // Its first try may meet a connection the restart closed; a release whose answer was lost
      // has been made all the same: done when the run is no longer the test's.
      await waitFor(
        "the test's release of its run",
        async () => {
          await journal.runs.release(held.lease).catch(() => {});
          const { rows } = await admin.query("SELECT lease_owner FROM runs WHERE job_id = 'o-0'");
          return rows[0]?.lease_owner !== "test";
        },
        { timeoutMs: 240_000, ignoreErrors: true },
      );
      // 2. Mid-run.
      await waitFor(
        "the drain to be under way",
        async () => {
          const a = await journal.runs.active();
          return a.pending > 0 && a.pending < OUTPUTS - 1;
        },
        { timeoutMs: 240_000, ignoreErrors: true },
      );
      await outage();

      const code = await Promise.race([
        exited,
        sleep(240_000).then(() => `still running after 240 s: ${stderr}` as const),
      ]);
      expect(code, stderr).toBe(0);
      expect(stderr).toContain("interpreter.journal-unavailable");
      const summary = JSON.parse(stdout);
      expect(summary.endedDead).toBe(false);
      expect(summary.dead).toEqual([]);

      const active = await journal.runs.active();
      expect(active.pending + active.running + active.failed).toBe(0);
      expect((await journal.status()).runs).toMatchObject({ done: OUTPUTS, dead: 0 });
      expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
    } finally {
      child?.kill("SIGTERM");
      await admin.end().catch(() => {});
      await journal.close();
    }
  }, 600_000);
});
