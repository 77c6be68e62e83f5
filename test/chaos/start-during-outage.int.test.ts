// Started during an outage (a finding of the cluster drill, issue 20): `idem executor` and
// `idem interpreter` started while their PostgreSQL journal is down used to exit 1 at once
// ("connect ECONNREFUSED", "the database system is starting up", ENETUNREACH from a host cut
// off). They now wait for it, saying so, and come up when it does: a job enqueued then runs and
// its effect is applied. Told to stop while they wait, they exit 0.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { enqueueJobs } from "@idem/core";
import { PostgresJournalStore } from "@idem/journal";
import { startPostgres, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDEM_BIN, REPO_ROOT, waitFor } from "./interpreter-fixture.js";

let pg: Awaited<ReturnType<typeof startPostgres>>;
beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

const AGENT = `let t = "";
process.stdin.on("data", (d) => (t += d)).on("end", () => {
  const job = JSON.parse(t);
  process.stdout.write(JSON.stringify({ effects: [
    { kind: "file.write", root: "out", path: job.jobId + ".txt", content: "done\\n" },
  ] }));
});`;

function idem(dir: string, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", IDEM_LOG_LEVEL: "warn" };
  for (const k of Object.keys(env))
    if (k.startsWith("OTEL_") || k === "NATS_URL" || k === "IDEM_JOURNAL_URL" || k === "IDEM_FAULT")
      delete env[k];
  const child: ChildProcess = spawn(process.execPath, [IDEM_BIN, ...args], {
    cwd: dir,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, exited, stderr: () => stderr };
}

async function workspace(name: string) {
  const dir = await tempDir(`idem-start-outage-${name}-`);
  const url = await pg.createDatabase(name);
  writeFileSync(join(dir.path, "agent.mjs"), AGENT);
  mkdirSync(join(dir.path, "out"));
  writeFileSync(
    join(dir.path, "idem.config.json"),
    JSON.stringify({
      journal: { url },
      roots: { out: { path: "out" } },
      agents: { writer: { command: [process.execPath, join(dir.path, "agent.mjs")] } },
      queue: { ackWaitMs: 30_000, backoffMs: [200] },
      interpreter: { pollMs: 100 },
    }),
  );
  // The tables exist (a journal in use): the outage is the server's, not a fresh install's.
  await (await PostgresJournalStore.open(url)).close();
  return { dir, url };
}

describe("executor and interpreter started while the PostgreSQL journal is down", () => {
  it("wait for it, saying so, and run the job enqueued once it is back", async () => {
    const { dir, url } = await workspace("outage_wait");
    await pg.kill();
    const executor = idem(dir.path, "executor", "--no-api");
    const interpreter = idem(dir.path, "interpreter");
    try {
      await waitFor("both to say they wait", () =>
        [executor, interpreter].every((p) => p.stderr().includes("is not available yet: waiting")),
      );
      expect(executor.child.exitCode).toBeNull();
      expect(interpreter.child.exitCode).toBeNull();
      await pg.restart();
      const journal = await PostgresJournalStore.open(url);
      try {
        await enqueueJobs([{ jobId: "after-1", agent: "writer", input: {} }], {
          journal,
          actor: "test",
        });
        await waitFor(
          "the job's effect",
          async () => (await journal.status()).runs.done === 1,
        ).catch(async (e) => {
          throw new Error(
            `${e.message}: ${JSON.stringify(await journal.status())}\nexecutor: ${executor.stderr().slice(-3000)}\ninterpreter: ${interpreter.stderr().slice(-3000)}`,
          );
        });
      } finally {
        await journal.close();
      }
      expect(readFileSync(join(dir.path, "out/after-1.txt"), "utf8")).toBe("done\n");
      executor.child.kill("SIGTERM");
      interpreter.child.kill("SIGTERM");
      expect(await executor.exited).toBe(0);
      expect(await interpreter.exited).toBe(0);
    } finally {
      executor.child.kill("SIGKILL");
      interpreter.child.kill("SIGKILL");
      await pg.restart().catch(() => {});
      await dir[Symbol.asyncDispose]();
    }
  }, 300_000);

  it("exit 0 when told to stop while they wait", async () => {
    const { dir } = await workspace("outage_stop");
    await pg.kill();
    const executor = idem(dir.path, "executor", "--no-api");
    const interpreter = idem(dir.path, "interpreter");
    try {
      await waitFor("both to say they wait", () =>
        [executor, interpreter].every((p) => p.stderr().includes("is not available yet: waiting")),
      );
      executor.child.kill("SIGTERM");
      interpreter.child.kill("SIGTERM");
      expect(await executor.exited).toBe(0);
      expect(await interpreter.exited).toBe(0);
    } finally {
      executor.child.kill("SIGKILL");
      interpreter.child.kill("SIGKILL");
      await pg.restart();
      await dir[Symbol.asyncDispose]();
    }
  }, 300_000);
});
