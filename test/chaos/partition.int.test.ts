// A host cut off mid-apply (issue 20): two idem hosts in network namespaces share a PostgreSQL
// journal and a repository on a git daemon. Host A's interpreter stops itself (IDEM_PAUSE) right
// after recording the intent of the third of 20 commits; A is cut off from the network and woken,
// so it runs on without a network past its lease. Host B's interpreter takes the run over and
// finishes it. Healed, A changes nothing: the journal's runs, ledger and events and the remote
// branch are as B left them, and each effect key is on the remote branch once.
import { type ChildProcess, execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PostgresJournalStore } from "@idem/journal";
import { type AgentOutput, parseConfig } from "@idem/schema";
import {
  createNetnsNetwork,
  type GitDaemonHandle,
  ignoreServerShutdown,
  type NetnsHost,
  type NetnsNetwork,
  type PostgresHandle,
  startGitDaemon,
  startPostgres,
  tempDir,
} from "@idem/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipUnless } from "../support/skip.js";
import {
  IDEM_BIN,
  isStopped,
  journalSnapshot,
  REPO_ROOT,
  recordAll,
  trailerCounts,
  waitFor,
} from "./interpreter-fixture.js";

const root = process.getuid?.() === 0;
const LEASE_MS = 2_000;
let net: NetnsNetwork;
let server: PostgresHandle;
let daemon: GitDaemonHandle;

beforeAll(async () => {
  if (!root) return;
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  net = await createNetnsNetwork();
  server = await startPostgres({ listen: { address: net.address, network: net.network } });
  daemon = await startGitDaemon({ host: net.address });
}, 180_000);
afterAll(async () => {
  await daemon?.stop();
  await server?.stop();
  await net?.remove();
});

function interpreter(host: NetnsHost, dir: string, pause?: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1" };
  for (const k of Object.keys(env))
    if (k.startsWith("OTEL_") || k.startsWith("IDEM_") || k === "NATS_URL") delete env[k];
  env.IDEM_LOG_LEVEL = "warn";
  if (pause) env.IDEM_PAUSE = pause;
  const child: ChildProcess = host.spawn(
    process.execPath,
    [IDEM_BIN, "interpreter", "--config", join(dir, "idem.config.json")],
    { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return { child, exited, stderr: () => stderr };
}

const AS_ROOT = skipUnless(root, "needs root: network namespaces");

describe("a host cut off mid-apply past its lease (needs root)", AS_ROOT, () => {
  it("is taken over by another host and, healed, changes nothing in the journal or on the remote", async () => {
    await using dir = await tempDir("idem-partition-");
    const url = await server.createDatabase("partition");
    const repo = daemon.createRepo("site");
    const hostUrl = url.replace("127.0.0.1", net.address);
    const configObject = {
      journal: { url: hostUrl },
      repos: { site: { url: repo.url, branch: "main" } },
      interpreter: { leaseMs: LEASE_MS, pollMs: 50, backoffMs: [100, 500], maxAttempts: 50 },
    };
    const hosts = [await net.addHost(), await net.addHost()];
    const dirs = ["host-a", "host-b"].map((name) => {
      const d = join(dir.path, name);
      mkdirSync(d);
      writeFileSync(join(d, "idem.config.json"), JSON.stringify(configObject));
      return d;
    });
    const parsed = parseConfig(configObject, { dir: dir.path });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const output: AgentOutput = {
      jobId: "cut-1",
      agent: "writer",
      effects: Array.from({ length: 20 }, (_, i) => ({
        kind: "git.commit" as const,
        repo: "site",
        message: `commit ${i}`,
        files: [{ path: `f/${i}.txt`, content: `${i}\n` }],
      })),
    };
    const journal = await PostgresJournalStore.open(url, { max: 2 });
    const db = new pg.Pool({ connectionString: url, max: 1 });
    db.on("error", ignoreServerShutdown);
    const [hostA, hostB] = hosts as [NetnsHost, NetnsHost];
    const a = interpreter(hostA, dirs[0] as string, "interpreter.after-intent:3");
    let b: ReturnType<typeof interpreter> | undefined;
    try {
      await recordAll(journal, parsed.config, [output]);
      await waitFor("host A to stop after the third intent", async () =>
        isStopped(a.child.pid as number),
      );
      const [held] = (await db.query("SELECT lease_owner FROM runs")).rows;
      // Cut off, then woken: A runs on without a network while its lease lapses.
      await hostA.cut();
      a.child.kill("SIGCONT");
      b = interpreter(hostB, dirs[1] as string);
      await waitFor("host B to finish the run", async () => {
        const { rows } = await db.query("SELECT state, lease_owner FROM runs");
        return rows[0]?.state === "done" && rows[0]?.lease_owner !== held?.lease_owner;
      });
      b.child.kill("SIGTERM");
      await b.exited;
      const before = await journalSnapshot(db);
      const head = execFileSync("git", ["--git-dir", repo.path, "rev-parse", "main"]).toString();
      await hostA.heal();
      // A's journal query or push sent while cut off sits on a connection whose packets were
      // dropped (no reset); when it comes back is up to TCP and git, and was seen to take more
      // than 10 minutes. Whatever A does meanwhile must change nothing: the test gives it a
      // minute to find its lease gone, then stops it, and compares either way.
      await waitFor(
        "host A, healed, to find its lease gone",
        async () => a.stderr().includes("run.lease-lost"),
        { timeoutMs: 60_000, intervalMs: 200 },
      ).catch(() => {});
      a.child.kill("SIGKILL");
      await a.exited;
      expect(await journalSnapshot(db)).toEqual(before);
      expect(execFileSync("git", ["--git-dir", repo.path, "rev-parse", "main"]).toString()).toBe(
        head,
      );
      const counts = await trailerCounts(repo.path);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(counts.size).toBe(20);
    } finally {
      a.child.kill("SIGCONT");
      a.child.kill("SIGKILL");
      b?.child.kill("SIGKILL");
      await db.end();
      await journal.close();
    }
  }, 300_000);
});
