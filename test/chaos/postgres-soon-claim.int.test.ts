// A run's claim is durable soon on PostgreSQL (synchronous_commit off for that transaction,
// docs/reliability.md, "What is durable when"): `idem interpreter --once` SIGKILLed by IDEM_FAULT
// right after a claim (interpreter.after-claim), then at once the PostgreSQL server SIGKILLed too,
// which may take the claim with it. Either way the run is not lost: restarted, the server holds the
// run pending (the claim was lost) or running under the dead holder's lease (it was kept), and a
// fresh interpreter takes it and applies every effect once.
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { PostgresJournalStore } from "@idem/journal";
import { FAULT_POINTS } from "@idem/schema";
import { startPostgres, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLEAN,
  chainOutputs,
  createWorkspace,
  IDEM_BIN,
  REPO_ROOT,
  recordAll,
  verify,
} from "./interpreter-fixture.js";

const execFileP = promisify(execFile);

let pg: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

const env = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1", ...extra };
  for (const k of Object.keys(e)) if (k.startsWith("OTEL_") || k === "NATS_URL") delete e[k];
  delete e.IDEM_JOURNAL_URL;
  return e;
};

/** Runs `idem interpreter --once`; resolves with its exit. */
async function interpreterOnce(configFile: string, extra: Record<string, string> = {}) {
  try {
    await execFileP(process.execPath, [IDEM_BIN, "interpreter", "--once", "--config", configFile], {
      env: env(extra),
    });
    return { code: 0, signal: null as NodeJS.Signals | null, stderr: "" };
  } catch (e) {
    const x = e as { code?: number; signal?: NodeJS.Signals; stderr?: string };
    return { code: x.code ?? null, signal: x.signal ?? null, stderr: x.stderr ?? "" };
  }
}

describe("a run's claim may be lost with the server (PostgreSQL)", () => {
  it("applies every effect once after a SIGKILL at interpreter.after-claim followed at once by a SIGKILL of the server", async () => {
    await using dir = await tempDir("idem-pg-claim-");
    const url = await pg.createDatabase("soon_claim");
    const ws = await createWorkspace(dir.path, { leaseMs: 800 }, { journal: { url } });
    const outputs = chainOutputs("pgc", 3);
    let journal = await PostgresJournalStore.open(url, { max: 2 });
    try {
      await recordAll(journal, ws.config, outputs);
      await journal.close();
      // The second claim: the first run is done (soon) and the second claimed, nothing of it applied.
      const killed = await interpreterOnce(ws.configFile, {
        IDEM_FAULT: `${FAULT_POINTS.INTERPRETER_AFTER_CLAIM}:2`,
      });
      expect(killed.signal, killed.stderr).toBe("SIGKILL");
      await pg.kill();
      await pg.restart();
      journal = await PostgresJournalStore.open(url, { max: 2 });
      const second = outputs[1]?.jobId ?? "";
      // Claimed or not, the second run has no effect in its ledger: nothing was applied under it.
      expect(["pending", "running"]).toContain((await journal.runs.latest(second))?.state);
      expect(await journal.ledger.forJob(second)).toEqual([]);
      const fresh = await interpreterOnce(ws.configFile);
      expect(fresh.code, fresh.stderr).toBe(0);
      expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
    } finally {
      await journal.close();
    }
  }, 300_000);
});
