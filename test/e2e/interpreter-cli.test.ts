// `idem interpreter` and `idem dlq` as a person runs them: the real CLI in child processes.
import { execFile, execFileSync, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { freePort, tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createWorkspace,
  IDEM_BIN,
  mixedOutput,
  openWorkspaceJournal,
  REPO_ROOT,
  recordAll,
  sleep,
  verify,
  type Workspace,
} from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
}, 180_000);

async function idem(
  ws: Workspace,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [IDEM_BIN, ...args, "--config", ws.configFile],
      {
        env: { ...process.env, IDEM_LOG_LEVEL: "warn", USER: "tester" },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const badPatch = {
  jobId: "bad",
  agent: "writer",
  effects: [
    {
      kind: "git.patch" as const,
      repo: "site",
      message: "bad",
      patch:
        "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-nothing like this\n+x\n",
    },
  ],
};

describe("idem interpreter and idem dlq", () => {
  it("--once applies everything and exits 0; a dead run makes it exit 1 and shows in dlq ls", async () => {
    await using dir = await tempDir("idem-cli-interp-");
    const ws = await createWorkspace(dir.path);
    const outputs = [mixedOutput("one"), mixedOutput("two")];
    const journal = await openWorkspaceJournal(ws);
    try {
      await recordAll(journal, ws.config, outputs);
      const ok = await idem(ws, "interpreter", "--once");
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain("2 done");
      expect(await verify(ws, journal, outputs)).toMatchObject({ duplicates: [], missing: [] });

      await recordAll(journal, ws.config, [badPatch]);
      const dead = await idem(ws, "interpreter", "--once", "--concurrency", "2");
      expect(dead.code).toBe(1);
      const ls = await idem(ws, "dlq", "ls", "--json");
      expect(ls.code, ls.stderr).toBe(0);
      const listing = JSON.parse(ls.stdout) as {
        runs: { jobId: string; class: string; attempts: number; lastError: string }[];
      };
      expect(listing.runs).toHaveLength(1);
      expect(listing.runs[0]).toMatchObject({ jobId: "bad", class: "conflict", attempts: 1 });
      const table = await idem(ws, "dlq", "ls");
      expect(table.stdout).toContain("bad");

      const notDead = await idem(ws, "dlq", "retry", "one");
      expect(notDead.code).toBe(1);
      const retry = await idem(ws, "dlq", "retry", "bad", "--json");
      expect(retry.code, retry.stderr).toBe(0);
      expect(JSON.parse(retry.stdout)).toMatchObject({ jobId: "bad", generation: 2 });
      expect((await journal.runs.latest("bad"))?.state).toBe("pending");
      expect((await idem(ws, "interpreter", "--once")).code).toBe(1); // still conflicts

      // A dead-lettered job (no output) is listed beside the dead runs and retried through the queue.
      await journal.jobs.enqueue({ jobId: "never", agent: "writer", input: {} });
      await journal.deadLetters.add("never", {
        class: "transient",
        error: "agent timed out",
        deliveries: 3,
      });
      const both = JSON.parse((await idem(ws, "dlq", "ls", "--json")).stdout) as {
        jobs: { jobId: string; class: string }[];
      };
      expect(both.jobs).toMatchObject([{ jobId: "never", class: "transient" }]);
      const requeue = await idem(ws, "dlq", "retry", "never", "--json");
      expect(requeue.code, requeue.stderr).toBe(0);
      expect(JSON.parse(requeue.stdout)).toMatchObject({ jobId: "never", requeued: true });
      expect((await journal.jobs.get("never"))?.state).toBe("queued");

      const usage = await idem(ws, "interpreter", "--once", "--concurrency", "zero");
      expect(usage.code).toBe(2);
    } finally {
      await journal.close();
    }
  });

  it("an unanswered webhook without idempotency keys goes uncertain; dlq resolve lets the run finish", async () => {
    const requests: string[] = [];
    const server = createServer((req) => {
      requests.push(String(req.headers["idempotency-key"]));
      req.resume(); // never answers
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    try {
      await using dir = await tempDir("idem-cli-dlq-");
      const ws = await createWorkspace(
        dir.path,
        {},
        // The request reaches the server long before the timeout, however busy the machine.
        { http: { targets: { hooks: { baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 5_000 } } } },
      );
      const out = {
        jobId: "hook",
        agent: "writer",
        effects: [
          { kind: "http.request" as const, target: "hooks", method: "POST" as const, path: "/x" },
          { kind: "file.write" as const, root: "outbox", path: "after.txt", content: "after\n" },
        ],
      };
      const journal = await openWorkspaceJournal(ws);
      try {
        await recordAll(journal, ws.config, [out]);
        const first = await idem(ws, "interpreter", "--once");
        expect(first.code).toBe(1);
        const ls = JSON.parse((await idem(ws, "dlq", "ls", "--json")).stdout) as {
          uncertain: { key: string }[];
          runs: { class: string }[];
        };
        expect(ls.uncertain.map((u) => u.key)).toEqual(["hook/0"]);
        expect(ls.runs[0]?.class).toBe("uncertain");

        expect((await idem(ws, "dlq", "resolve", "hook", "--applied")).code).toBe(2);
        expect((await idem(ws, "dlq", "resolve", "hook", "--reason", "seen")).code).toBe(2);
        const resolved = await idem(
          ws,
          "dlq",
          "resolve",
          "hook",
          "--applied",
          "--reason",
          "the receiver logged it",
          "--actor",
          "alice",
        );
        expect(resolved.code, resolved.stderr).toBe(0);
        const done = await idem(ws, "interpreter", "--once");
        expect(done.code, done.stderr).toBe(0);
        expect((await journal.runs.latest("hook"))?.state).toBe("done");
        expect((await journal.ledger.forJob("hook", 1)).map((e) => e.state)).toEqual([
          "applied",
          "applied",
        ]);
        expect(requests).toEqual(["hook/0"]); // sent once, never again
        const ev = (await journal.events.list({ jobId: "hook", type: "effect.resolved" }))[0];
        expect(ev?.actor).toBe("alice");
        expect(ev?.data?.reason).toBe("the receiver logged it");
      } finally {
        await journal.close();
      }
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("the long-running form serves /metrics, picks up new outputs and exits 0 on SIGTERM", async () => {
    await using dir = await tempDir("idem-cli-long-");
    const port = await freePort();
    const ws = await createWorkspace(dir.path, { metricsPort: port, pollMs: 50 });
    const journal = await openWorkspaceJournal(ws);
    const child = spawn(process.execPath, [IDEM_BIN, "interpreter", "--config", ws.configFile], {
      env: { ...process.env, IDEM_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
      const outputs = [mixedOutput("late")];
      await recordAll(journal, ws.config, outputs);
      for (let i = 0; i < 200 && (await journal.runs.latest("late"))?.state !== "done"; i++) {
        await sleep(50);
      }
      expect((await journal.runs.latest("late"))?.state).toBe("done");
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/idem_interpreter_runs_total\{outcome="done"\} 1/);
      expect(metrics).toMatch(
        /idem_interpreter_effects_total\{kind="git.commit",outcome="applied"\} 1/,
      );
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      // one JSON line per transition on stderr
      const lines = stderr
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { event?: string });
      expect(lines.map((l) => l.event)).toEqual(
        expect.arrayContaining(["run.claimed", "effect.applied", "run.done"]),
      );
    } finally {
      // A failed assertion must not leave the interpreter running after the test.
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await journal.close();
    }
  });
});
