// Several interpreter processes on one journal, killed at random moments; a stale lease holder
// paused past its lease; an interpreter killed at random 30+ times. Zero duplicates, zero missing.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentOutput } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CLEAN,
  chainOutputs,
  createWorkspace,
  git,
  mixedOutput,
  newFilePatch,
  openWorkspaceJournal,
  REPO_ROOT,
  recordAll,
  sleep,
  startChild,
  verify,
  type Workspace,
} from "./interpreter-fixture.js";

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "apps/interpreter"], { cwd: REPO_ROOT, stdio: "ignore" });
});

/**
 * A workspace (lease 600 ms) with a webhook target `hooks` whose first `hold` requests hang until
 * the test answers them from `held`; every later request is answered at once.
 */
async function workspaceWithHeldHook(prefix: string, hold: number) {
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    if (held.length < hold) held.push(res);
    else res.writeHead(200).end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const dir = await tempDir(prefix);
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ws = await createWorkspace(
    dir.path,
    { leaseMs: 600 },
    { http: { targets: { hooks: { baseUrl, idempotencyKeys: true, timeoutMs: 20_000 } } } },
  );
  return {
    ws,
    held,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await dir[Symbol.asyncDispose]();
    },
  };
}

/** Runs `processes` children until the journal is drained, SIGKILLing one at random every so often. */
async function drainWithKills(
  ws: Workspace,
  processes: number,
  options: { kills: number; everyMs: [number, number]; args?: string[] },
): Promise<number> {
  let kills = 0;
  const running = new Set<ReturnType<typeof startChild>>();
  const spawnOne = () => {
    const c = startChild(ws, { args: options.args });
    running.add(c);
    void c.done.then(() => running.delete(c));
    return c;
  };
  for (let i = 0; i < processes; i++) spawnOne();
  while (kills < options.kills && running.size > 0) {
    const [lo, hi] = options.everyMs;
    await sleep(lo + Math.random() * (hi - lo));
    const victims = [...running];
    const victim = victims[Math.floor(Math.random() * victims.length)];
    if (!victim) break;
    victim.child.kill("SIGKILL");
    await victim.done;
    kills++;
    spawnOne();
  }
  const results = await Promise.all([...running].map((c) => c.done));
  for (const r of results) expect(r.code, r.stderr).toBe(0);
  // A last clean pass: every process may have exited while a killed one's lease was still running out.
  const last = await startChild(ws).done;
  expect(last.code, last.stderr).toBe(0);
  return kills;
}

async function chainInOrder(repoPath: string, prefix: string, n: number): Promise<void> {
  const content = await git(repoPath, "show", "main:chain.txt");
  expect(content).toBe(
    `${Array.from({ length: n }, (_, i) => `${prefix} line ${i}`).join("\n")}\n`,
  );
  const subjects = (await git(repoPath, "log", "--reverse", "--format=%s", "main"))
    .trim()
    .split("\n")
    .filter((s) => s.startsWith("chain "));
  expect(subjects).toEqual(Array.from({ length: n }, (_, i) => `chain ${i}`));
}

describe("interpreter processes on one journal", () => {
  it.each([2, 4])(
    "%i processes drain one journal while being killed: no duplicates, a 50-patch chain in order",
    async (processes) => {
      await using dir = await tempDir("idem-multi-");
      const ws = await createWorkspace(dir.path, { leaseMs: 800 });
      const outputs: AgentOutput[] = [];
      const chain = chainOutputs("chain", 50, "docs");
      for (let i = 0; i < 50; i++) {
        outputs.push(chain[i] as AgentOutput);
        if (i % 3 === 0) outputs.push(mixedOutput(`mixed-${i}`));
      }
      const journal = await openWorkspaceJournal(ws);
      try {
        await recordAll(journal, ws.config, outputs);
        const kills = await drainWithKills(ws, processes, {
          kills: processes,
          everyMs: [300, 700],
          args: ["--concurrency", "2"],
        });
        expect(kills).toBe(processes);
        expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
        await chainInOrder(ws.docsPath, "chain", 50);
        const done = await journal.events.list({ type: "run.done" });
        const perJob = new Map<string, number>();
        for (const e of done) perJob.set(String(e.jobId), (perJob.get(String(e.jobId)) ?? 0) + 1);
        expect([...perJob.values()].every((n) => n === 1)).toBe(true);
        expect(perJob.size).toBe(outputs.length);
      } finally {
        await journal.close();
      }
    },
  );

  it("a holder paused past its lease changes nothing in the journal or at the target when it resumes", async () => {
    // The stale holder is paused while it waits on a webhook (holding no repo lock), so that what it
    // would do on resuming is exactly the rest of a run another interpreter has already finished.
    await using hook = await workspaceWithHeldHook("idem-stale-", 1);
    const { ws, held } = hook;
    const outputs: AgentOutput[] = [
      {
        jobId: "stale",
        agent: "writer",
        effects: [
          { kind: "http.request", target: "hooks", method: "POST", path: "/hook", body: "{}" },
          {
            kind: "git.patch",
            repo: "site",
            message: "after the hook",
            patch: newFilePatch("hooked.txt", ["hooked"]),
          },
          { kind: "file.write", root: "outbox", path: "hooked.txt", content: "hooked\n" },
        ],
      },
    ];
    const journal = await openWorkspaceJournal(ws);
    try {
      await recordAll(journal, ws.config, outputs);
      const a = startChild(ws, { env: { IDEM_OWNER: "stale-holder" } });
      while (held.length === 0) await sleep(20);
      a.child.kill("SIGSTOP");
      await sleep(900); // past the lease
      const b = await startChild(ws, { env: { IDEM_OWNER: "taker" } }).done;
      expect(b.code, b.stderr).toBe(0);
      expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
      const snapshot = async () => ({
        events: (await journal.events.list()).length,
        effects: await journal.ledger.forJob("stale"),
        runs: await journal.runs.forJob("stale"),
        head: await git(ws.repoPath, "rev-parse", "main"),
        refs: await git(ws.repoPath, "for-each-ref"),
        outbox: readdirSync(ws.outboxPath),
      });
      const before = await snapshot();
      expect(before.runs[0]?.leaseExpiries).toBe(1);
      // The webhook answers the stale holder now; it resumes and must change nothing.
      for (const res of held) res.writeHead(200).end("ok");
      a.child.kill("SIGCONT");
      const resumed = await a.done;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain("lease");
      expect(await snapshot()).toEqual(before);
    } finally {
      await journal.close();
    }
  });

  it("a holder paused past its lease is fenced by its token while the new holder is still working", async () => {
    // Both holders wait on the webhook: the stale one wakes while the run is still running under
    // the new holder, so only the lease token (not the run's state) can stop its writes.
    await using hook = await workspaceWithHeldHook("idem-fenced-", 2);
    const { ws, held } = hook;
    const outputs: AgentOutput[] = [
      {
        jobId: "fenced",
        agent: "writer",
        effects: [
          { kind: "http.request", target: "hooks", method: "POST", path: "/hook", body: "{}" },
          { kind: "file.write", root: "outbox", path: "fenced.txt", content: "once\n" },
        ],
      },
    ];
    const journal = await openWorkspaceJournal(ws);
    try {
      await recordAll(journal, ws.config, outputs);
      const a = startChild(ws, { env: { IDEM_OWNER: "stale-holder" } });
      while (held.length < 1) await sleep(20);
      a.child.kill("SIGSTOP");
      await sleep(900); // past the lease
      const b = startChild(ws, { env: { IDEM_OWNER: "taker" } });
      while (held.length < 2) await sleep(20); // the taker holds the run and waits on the hook
      const snapshot = async () => ({
        effects: await journal.ledger.forJob("fenced"),
        runs: (await journal.runs.forJob("fenced")).map((r) => ({
          ...r,
          leaseUntil: null,
          updatedAt: 0,
        })),
        writes: (await journal.events.list({ jobId: "fenced" })).filter(
          (e) => e.actor === "stale-holder",
        ).length,
        outbox: readdirSync(ws.outboxPath),
      });
      const before = await snapshot();
      expect(before.runs[0]?.state).toBe("running");
      let staleLog = "";
      a.child.stderr?.on("data", (d: Buffer) => {
        staleLog += d.toString();
      });
      (held[0] as ServerResponse).writeHead(200).end("ok");
      a.child.kill("SIGCONT");
      // The stale holder's webhook answered: its next write must be refused (it then waits, as
      // --once does, for the taker's run to end).
      const wakeBound = Date.now() + 60_000; // far beyond the stale holder's next write
      while (!staleLog.includes("lease-lost") && Date.now() < wakeBound) await sleep(20);
      expect(staleLog).toContain("lease-lost");
      expect(await snapshot()).toEqual(before);
      (held[1] as ServerResponse).writeHead(200).end("ok");
      const taken = await b.done;
      expect(taken.code, taken.stderr).toBe(0);
      const resumed = await a.done;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
    } finally {
      await journal.close();
    }
  });

  it("drains 320+ outputs through 30+ SIGKILLs at random moments with no duplicate, no gap and no dead run", async () => {
    await using dir = await tempDir("idem-random-");
    const ws = await createWorkspace(dir.path, { leaseMs: 600 });
    const outputs: AgentOutput[] = [];
    const more = (n: number): AgentOutput[] => {
      const added: AgentOutput[] = [];
      for (let i = outputs.length; added.length < n; i++) {
        const id = `r-${String(i).padStart(3, "0")}`;
        const kind = i % 3;
        added.push({
          jobId: id,
          agent: "writer",
          effects: [
            kind === 0
              ? {
                  kind: "git.commit",
                  repo: "site",
                  message: `commit ${id}`,
                  files: [{ path: `c/${id}.txt`, content: `${id}\n` }],
                }
              : kind === 1
                ? {
                    kind: "git.patch",
                    repo: "docs",
                    message: `patch ${id}`,
                    patch: newFilePatch(`p/${id}.txt`, [id]),
                  }
                : { kind: "file.write", root: "outbox", path: `f/${id}.txt`, content: `${id}\n` },
          ],
        });
      }
      outputs.push(...added);
      return added;
    };
    const journal = await openWorkspaceJournal(ws);
    try {
      await recordAll(journal, ws.config, more(320));
      let kills = 0;
      for (;;) {
        const c = startChild(ws, { args: ["--concurrency", "3"] });
        const outcome = await Promise.race([
          c.done,
          sleep(kills < 30 ? 200 + Math.random() * 400 : 120_000).then(() => undefined),
        ]);
        if (outcome) {
          expect(outcome.code, outcome.stderr).toBe(0);
          if (kills >= 30) break;
          // A fast machine drained everything before the 30th kill: more work, and kill on.
          await recordAll(journal, ws.config, more(80));
          continue;
        }
        c.child.kill("SIGKILL");
        await c.done;
        kills++;
      }
      expect(kills).toBeGreaterThanOrEqual(30);
      expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
      expect((await journal.status()).runs.dead).toBe(0);
    } finally {
      await journal.close();
    }
  });
});
