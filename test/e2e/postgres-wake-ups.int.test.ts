// Wake-ups without polling on a PostgreSQL journal: with pollMs at 10 minutes, an idle interpreter
// (the CLI) and an idle embedded executor are woken by LISTEN/NOTIFY when another process records
// an output or enqueues a job. Each wait below is bounded at 60 s, far under pollMs: it holds on a
// slow machine and fails only when the wake-up is missing.
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { effectTargetsOf } from "@idem/effects";
import { createExecutor } from "@idem/executor";
import { type JournalStore, PostgresJournalStore } from "@idem/journal";
import { type AgentOutput, defaultConfig, IdemError, parseConfig } from "@idem/schema";
import { startPostgres, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, IDEM_BIN, REPO_ROOT } from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);
const POLL_MS = 600_000;
let pg: Awaited<ReturnType<typeof startPostgres>>;
let databases = 0;

beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

const env = (): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1" };
  for (const k of Object.keys(e)) if (k.startsWith("OTEL_") || k === "NATS_URL") delete e[k];
  delete e.IDEM_JOURNAL_URL;
  return e;
};

/** Polls a condition every 50 ms for at most 60 s (the bound far below pollMs). */
async function within60s(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not happen within 60 s (pollMs is ${POLL_MS} ms)`);
}

/** Sessions LISTENing on the journal's channel: the idle processes are waiting on it. */
async function listeners(journal: PostgresJournalStore, url: string): Promise<number> {
  const db = new URL(url).pathname.slice(1);
  const pool = (
    journal as unknown as { c: { query: (q: string, v: unknown[]) => Promise<{ n: number }[]> } }
  ).c;
  const [row] = await pool.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN idem_work'",
    [db],
  );
  return row?.n ?? 0;
}

/** A connection the restart took away: the server's admin shutdown, or the socket gone. */
function lostServer(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  // The journal's own connection says UNAVAILABLE; a bare pg client says the driver's code.
  const codes = ["UNAVAILABLE", "57P01", "57P03", "ECONNREFUSED", "ECONNRESET"];
  if (typeof code === "string" && codes.includes(code)) return true;
  return e instanceof Error && /Connection terminated/.test(e.message);
}

describe("wake-ups on a PostgreSQL journal", () => {
  it("an idle interpreter applies a record made by another process well before pollMs", async () => {
    await using dir = await tempDir("idem-pg-wake-interp-");
    const url = await pg.createDatabase(`wake_${++databases}`);
    const ws = await createWorkspace(dir.path, { pollMs: POLL_MS }, { journal: { url } });
    const journal = await PostgresJournalStore.open(url);
    const child = spawn(process.execPath, [IDEM_BIN, "interpreter", "--config", ws.configFile], {
      env: env(),
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    try {
      await within60s("the interpreter listening", async () => (await listeners(journal, url)) > 0);
      const output: AgentOutput = {
        jobId: "woken",
        agent: "writer",
        effects: [{ kind: "file.write", root: "outbox", path: "woken.txt", content: "hi\n" }],
      };
      const recorded = await journal.outputs.record(output, {
        source: "api",
        targets: effectTargetsOf(output, defaultConfig(dir.path)),
      });
      expect(recorded.status).toBe("recorded");
      await within60s("the effect applied", () => existsSync(join(ws.outboxPath, "woken.txt")));
      await within60s(
        "the run done",
        async () => (await journal.runs.latest("woken"))?.state === "done",
      );
    } finally {
      await journal.close();
      child.kill("SIGTERM");
    }
    expect(await exited, stderr).toBe(0);
  });

  it("an idle embedded executor runs a job enqueued by another process well before pollMs, also after a server restart", async () => {
    await using dir = await tempDir("idem-pg-wake-exec-");
    const url = await pg.createDatabase(`wake_${++databases}`);
    const raw = { journal: { url }, agents: { writer: { command: ["true"] } } };
    const configFile = join(dir.path, "idem.config.json");
    writeFileSync(configFile, JSON.stringify(raw));
    const parsed = parseConfig(raw, { dir: dir.path, file: configFile });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const journal = await PostgresJournalStore.open(url);
    const ran: string[] = [];
    const executor = createExecutor({
      config: parsed.config,
      journal,
      pollMs: POLL_MS,
      run: async (job) => {
        ran.push(job.jobId);
        return { effects: [] };
      },
    });
    await executor.start();
    const enqueue = async (jobId: string) => {
      const file = join(dir.path, `${jobId}.json`);
      writeFileSync(file, JSON.stringify({ jobId, agent: "writer", input: {} }));
      await run(process.execPath, [IDEM_BIN, "enqueue", file, "--config", configFile], {
        env: env(),
      });
    };
    try {
      await within60s("the executor listening", async () => (await listeners(journal, url)) > 0);
      await enqueue("first");
      await within60s("first recorded", async () => await journal.outputs.has("first"));
      // The server restarts: the listening connection reconnects by itself and wakes it again.
      await pg.kill();
      await pg.restart();
      await within60s("the executor listening again", async () => {
        try {
          return (await listeners(journal, url)) > 0;
        } catch (e) {
          // The pool's idle clients lost their server: the next query reconnects.
          if (lostServer(e)) return false;
          throw e;
        }
      });
      await enqueue("second");
      await within60s("second recorded", async () => await journal.outputs.has("second"));
      expect(ran).toEqual(["first", "second"]);
    } finally {
      await executor.stop();
      await journal.close();
    }
  });

  it("an idle embedded executor whose wake-up claim after a restart meets a dead connection runs the next job well before pollMs", async () => {
    // The window of the race, forced: after the server restart the listener LISTENs again and wakes
    // the idle executor, whose claim goes through the pool; a pooled connection the restart killed
    // answers UNAVAILABLE (here always: the first claim after the restart is answered so). The
    // claim's outage backoff used to start at pollMs (10 minutes), sleeping through every wake-up.
    await using dir = await tempDir("idem-pg-wake-stale-");
    const url = await pg.createDatabase(`wake_${++databases}`);
    const raw = { journal: { url }, agents: { writer: { command: ["true"] } } };
    const configFile = join(dir.path, "idem.config.json");
    writeFileSync(configFile, JSON.stringify(raw));
    const parsed = parseConfig(raw, { dir: dir.path, file: configFile });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const journal = await PostgresJournalStore.open(url);
    const stale = { armed: false, thrown: 0 };
    const ran: string[] = [];
    const executor = createExecutor({
      config: parsed.config,
      journal: failingFirstClaimWhenArmed(journal, stale),
      pollMs: POLL_MS,
      run: async (job) => {
        ran.push(job.jobId);
        return { effects: [] };
      },
    });
    await executor.start();
    try {
      await within60s("the executor listening", async () => (await listeners(journal, url)) > 0);
      stale.armed = true;
      await pg.kill();
      await pg.restart();
      await within60s("the wake-up's claim answered UNAVAILABLE", () => stale.thrown === 1);
      await within60s("the executor listening again", async () => {
        try {
          return (await listeners(journal, url)) > 0;
        } catch (e) {
          if (lostServer(e)) return false;
          throw e;
        }
      });
      const file = join(dir.path, "after.json");
      writeFileSync(file, JSON.stringify({ jobId: "after", agent: "writer", input: {} }));
      await run(process.execPath, [IDEM_BIN, "enqueue", file, "--config", configFile], {
        env: env(),
      });
      await within60s("after recorded", async () => await journal.outputs.has("after"));
      expect(ran).toEqual(["after"]);
    } finally {
      await executor.stop();
      await journal.close();
    }
  });
});

/**
 * The journal, whose first `jobs.claimNext` once `state.armed` is set answers UNAVAILABLE as the
 * store does for a pooled connection the server's restart killed; every other call is the store's.
 */
function failingFirstClaimWhenArmed(
  journal: JournalStore,
  state: { armed: boolean; thrown: number },
): JournalStore {
  const jobs = new Proxy(journal.jobs, {
    get(target, prop, receiver) {
      if (prop === "claimNext") {
        return async (...args: Parameters<JournalStore["jobs"]["claimNext"]>) => {
          if (state.armed && state.thrown === 0) {
            state.thrown += 1;
            throw new IdemError(
              "UNAVAILABLE",
              "the journal's PostgreSQL server is unavailable: Connection terminated unexpectedly",
            );
          }
          return target.claimNext(...args);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return new Proxy(journal, {
    get(target, prop, receiver) {
      if (prop === "jobs") return jobs;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
