// What a SIGKILL of the PostgreSQL server takes with it right after the interpreter is SIGKILLed
// at a fault point (`idem interpreter --once` by IDEM_FAULT, then at once the server: what a power
// loss does to commits the server had not flushed), by what each write's durability allows
// (docs/reliability.md, "What is durable when"); then a fresh interpreter finishes every effect once.
// - interpreter.after-intent: the intent was committed with synchronous_commit on, never off as the
//   settles of probed effects and completions are: the restarted server still holds it.
// - interpreter.after-claim: a run's claim is durable soon (synchronous_commit off), so the server
//   may lose it: the run is then pending again, or running under the dead holder's lease.
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

/**
 * Records a chain of 3 outputs, SIGKILLs the interpreter at `point`'s second hit and the server at
 * once, restarts the server, hands `check` the reopened journal, then runs a fresh interpreter and
 * verifies every effect applied once.
 */
async function killBothAt(
  point: string,
  name: string,
  check: (journal: PostgresJournalStore, jobIds: string[]) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir(`idem-pg-${name}-`);
  const url = await pg.createDatabase(name);
  const ws = await createWorkspace(dir.path, { leaseMs: 800 }, { journal: { url } });
  const outputs = chainOutputs(name, 3);
  let journal = await PostgresJournalStore.open(url, { max: 2 });
  try {
    await recordAll(journal, ws.config, outputs);
    await journal.close();
    const killed = await interpreterOnce(ws.configFile, { IDEM_FAULT: `${point}:2` });
    expect(killed.signal, killed.stderr).toBe("SIGKILL");
    await pg.kill();
    await pg.restart();
    journal = await PostgresJournalStore.open(url, { max: 2 });
    await check(
      journal,
      outputs.map((o) => o.jobId),
    );
    const fresh = await interpreterOnce(ws.configFile);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
  } finally {
    await journal.close();
  }
}

describe("the intent is durable before the apply (PostgreSQL)", () => {
  it("holds the intent after a SIGKILL at interpreter.after-intent followed at once by a SIGKILL of the server", async () => {
    await killBothAt(
      FAULT_POINTS.INTERPRETER_AFTER_INTENT,
      "durable_intent",
      async (journal, [first, second]) => {
        expect((await journal.ledger.forJob(second ?? "")).map((r) => r.state)).toEqual([
          "intended",
        ]);
        // The effect before it was applied: settled (soon) or, if the kill took that, intended still.
        const before = (await journal.ledger.forJob(first ?? "")).map((r) => r.state);
        expect(["applied", "intended"]).toContain(before[0]);
      },
    );
  }, 300_000);
});

describe("a run's claim may be lost with the server (PostgreSQL)", () => {
  it("applies every effect once after a SIGKILL at interpreter.after-claim followed at once by a SIGKILL of the server", async () => {
    // The second claim: the first run is done (soon) and the second claimed, nothing of it applied.
    await killBothAt(
      FAULT_POINTS.INTERPRETER_AFTER_CLAIM,
      "soon_claim",
      async (journal, [, second]) => {
        // Claimed or not, the second run has no effect in its ledger: nothing was applied under it.
        expect(["pending", "running"]).toContain((await journal.runs.latest(second ?? ""))?.state);
        expect(await journal.ledger.forJob(second ?? "")).toEqual([]);
      },
    );
  }, 300_000);
});
