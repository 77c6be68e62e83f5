// What must be durable before the apply is, on PostgreSQL: `idem interpreter --once` SIGKILLed by
// IDEM_FAULT right after an intent (interpreter.after-intent), then at once the PostgreSQL server
// SIGKILLed too (what a power loss does to commits the server had not flushed). Restarted, the
// server must still hold the intent: it was committed with synchronous_commit on, never off as the
// settles of probed effects and completions are (docs/reliability.md, "What is durable when").
// Then a fresh interpreter finishes every effect once.
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

describe("the intent is durable before the apply (PostgreSQL)", () => {
  it("holds the intent after a SIGKILL at interpreter.after-intent followed at once by a SIGKILL of the server", async () => {
    await using dir = await tempDir("idem-pg-intent-");
    const url = await pg.createDatabase("durable_intent");
    const ws = await createWorkspace(dir.path, { leaseMs: 800 }, { journal: { url } });
    const outputs = chainOutputs("pgi", 3);
    let journal = await PostgresJournalStore.open(url, { max: 2 });
    try {
      await recordAll(journal, ws.config, outputs);
      await journal.close();
      const killed = await interpreterOnce(ws.configFile, {
        IDEM_FAULT: `${FAULT_POINTS.INTERPRETER_AFTER_INTENT}:2`,
      });
      expect(killed.signal, killed.stderr).toBe("SIGKILL");
      // What the server had not flushed to its WAL on disk is gone with it.
      await pg.kill();
      await pg.restart();
      journal = await PostgresJournalStore.open(url, { max: 2 });
      const [first, second] = outputs.map((o) => o.jobId);
      expect((await journal.ledger.forJob(second ?? "")).map((r) => r.state)).toEqual(["intended"]);
      // The effect before it was applied: settled (soon) or, if the kill took that, intended still.
      const before = (await journal.ledger.forJob(first ?? "")).map((r) => r.state);
      expect(["applied", "intended"]).toContain(before[0]);
      const fresh = await interpreterOnce(ws.configFile);
      expect(fresh.code, fresh.stderr).toBe(0);
      expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
    } finally {
      await journal.close();
    }
  }, 300_000);
});
