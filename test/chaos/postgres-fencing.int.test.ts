// Fencing on PostgreSQL (issue 18): an `idem interpreter` stops itself (IDEM_PAUSE, SIGSTOP) as soon
// as it holds a run (of 40 git commits): holding the run's lease and no repository lock, at the same
// step on every machine. It stays stopped past its lease; a second interpreter takes the run over
// and finishes it. SIGCONTed, the first changes nothing: the journal's runs, ledger and events and
// the branch are as the second left them, and each effect key is on the branch once. (A holder
// stopped while it holds the repository's own lock keeps it, by design: see docs/reliability.md and
// packages/effects/test/file-lock-holder.test.ts for what waiters then report.)
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { PostgresJournalStore } from "@idem/journal";
import type { AgentOutput } from "@idem/schema";
import { ignoreServerShutdown, startPostgres, tempDir } from "@idem/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLEAN,
  createWorkspace,
  git,
  IDEM_BIN,
  isStopped,
  journalSnapshot,
  REPO_ROOT,
  recordAll,
  trailerCounts,
  verify,
  waitFor,
} from "./interpreter-fixture.js";

const LEASE_MS = 2_000;

let server: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  server = await startPostgres();
}, 180_000);
afterAll(async () => {
  await server?.stop();
});

function interpreter(configFile: string, pause?: string) {
  const e: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1" };
  delete e.IDEM_PAUSE;
  delete e.IDEM_FAULT;
  if (pause) e.IDEM_PAUSE = pause;
  for (const k of Object.keys(e)) if (k.startsWith("OTEL_") || k === "NATS_URL") delete e[k];
  delete e.IDEM_JOURNAL_URL;
  const child: ChildProcess = spawn(
    process.execPath,
    [IDEM_BIN, "interpreter", "--config", configFile],
    {
      env: e,
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return { child, exited, stderr: () => stderr };
}

describe("fencing on a PostgreSQL journal", () => {
  it("an interpreter stopped past its lease changes nothing in the journal or at the target when it wakes", async () => {
    await using dir = await tempDir("idem-pg-fence-");
    const url = await server.createDatabase("fencing");
    const ws = await createWorkspace(
      dir.path,
      { leaseMs: LEASE_MS, pollMs: 50 },
      { journal: { url } },
    );
    const output: AgentOutput = {
      jobId: "fence-1",
      agent: "writer",
      effects: Array.from({ length: 40 }, (_, i) => ({
        kind: "git.commit" as const,
        repo: "site",
        message: `commit ${i}`,
        files: [{ path: `f/${i}.txt`, content: `${i}\n` }],
      })),
    };
    const journal = await PostgresJournalStore.open(url, { max: 2 });
    const db = new pg.Pool({ connectionString: url, max: 1 });
    db.on("error", ignoreServerShutdown);
    const a = interpreter(ws.configFile, "interpreter.after-claim");
    let b: ReturnType<typeof interpreter> | undefined;
    try {
      await recordAll(journal, ws.config, [output]);
      // It stops itself right after its claim: the lease is held, no effect begun, no repo lock.
      await waitFor("the first interpreter to stop holding the run", async () =>
        isStopped(a.child.pid as number),
      );
      const [held] = (await db.query("SELECT lease_owner, state FROM runs")).rows;
      expect(held?.state).toBe("running");
      expect(held?.lease_owner).toEqual(expect.stringContaining(`:${a.child.pid}:`));
      b = interpreter(ws.configFile);
      await waitFor("the second interpreter to finish the run", async () => {
        const { rows } = await db.query("SELECT state, lease_owner FROM runs");
        return rows[0]?.state === "done" && rows[0]?.lease_owner !== held?.lease_owner;
      });
      const before = await journalSnapshot(db);
      const head = await git(ws.repoPath, "rev-parse", "main");
      a.child.kill("SIGCONT");
      // Woken, it finds its lease gone at its next write and ends the run as lease-lost.
      await waitFor("the woken interpreter to end its run as lease-lost", async () =>
        a.stderr().includes("run.lease-lost"),
      );
      a.child.kill("SIGTERM");
      await a.exited;
      expect(await journalSnapshot(db)).toEqual(before);
      expect(await git(ws.repoPath, "rev-parse", "main")).toBe(head);
      const counts = await trailerCounts(ws.repoPath);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(40);
      expect(await verify(ws, journal, [output])).toEqual(CLEAN);
    } finally {
      a.child.kill("SIGCONT");
      a.child.kill("SIGTERM");
      b?.child.kill("SIGTERM");
      await db.end();
      await journal.close();
    }
  }, 300_000);
});
