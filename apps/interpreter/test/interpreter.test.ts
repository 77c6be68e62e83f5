import { spawn } from "node:child_process";
import { existsSync, fdatasync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { kindsOf, openEffects } from "@idem/core";
import type { Effects } from "@idem/effects";
import { type JournalStore, openSqliteJournal } from "@idem/journal";
import { tempDir } from "@idem/testing";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  CLEAN,
  chainOutputs,
  createWorkspace,
  mixedOutput,
  newFilePatch,
  openWorkspaceJournal,
  recordAll,
  trailerCounts,
  verify,
  type Workspace,
} from "../../../test/chaos/interpreter-fixture.js";
import { createInterpreter } from "../src/index.js";

const silent = pino({ level: "silent" });

/** Polls `check` until it holds; the bound is far beyond a passing run on a busy machine. */
async function waitFor(what: string, check: () => unknown, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A run lease no passing test outlives, however busy the machine: tests of lease expiry set theirs. */
const UNREACHED_LEASE_MS = 120_000;

async function setup(
  interpreter: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<{ ws: Workspace; journal: JournalStore; effects: Effects }> {
  const dir = await tempDir("idem-interp-");
  const ws = await createWorkspace(
    dir.path,
    { leaseMs: UNREACHED_LEASE_MS, ...interpreter },
    extra,
  );
  const journal = await openWorkspaceJournal(ws);
  const effects = openEffects(ws.config);
  cleanup.push(async () => {
    await effects.close();
    await journal.close();
    await dir.remove();
  });
  return { ws, journal, effects };
}

describe("createInterpreter", () => {
  it("applies commits, patches and file writes once, then finds them present on replay", async () => {
    const { ws, journal, effects } = await setup();
    const outputs = ["a", "b", "c"].map((id) => mixedOutput(`job-${id}`));
    await recordAll(journal, ws.config, outputs);
    const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    const result = await interp.drain();
    expect(result.runs.done).toBe(3);
    expect(result.endedDead).toBe(false);
    expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
    const ledger = await journal.ledger.forJob("job-a", 1);
    expect(ledger.map((e) => e.state)).toEqual(["applied", "applied", "applied"]);

    await journal.runs.replay({ all: true }, { actor: "test" });
    const again = await interp.drain();
    expect(again.runs.done).toBe(3);
    expect((await journal.ledger.forJob("job-a", 2)).map((e) => e.state)).toEqual([
      "present",
      "present",
      "present",
    ]);
    const counts = await trailerCounts(ws.repoPath);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.size).toBe(6);
  });

  it("applies a chain of dependent patches in recording order with several loops", async () => {
    const { ws, journal, effects } = await setup();
    const outputs = chainOutputs("chain", 12);
    await recordAll(journal, ws.config, outputs);
    const interp = createInterpreter({
      config: ws.config,
      journal,
      effects,
      logger: silent,
      concurrency: 3,
    });
    const result = await interp.drain();
    expect(result.runs.done).toBe(12);
    expect((await verify(ws, journal, outputs)).missing).toEqual([]);
  });

  it("sends a conflicting patch dead with class conflict and lets later runs on the target go ahead", async () => {
    const { ws, journal, effects } = await setup();
    const bad = {
      jobId: "bad",
      agent: "writer",
      effects: [
        {
          kind: "git.patch" as const,
          repo: "site",
          message: "bad",
          patch: [
            "diff --git a/README.md b/README.md",
            "--- a/README.md",
            "+++ b/README.md",
            "@@ -1 +1 @@",
            "-not what is there",
            "+x",
            "",
          ].join("\n"),
        },
      ],
    };
    const good = mixedOutput("after-bad");
    await recordAll(journal, ws.config, [bad, good]);
    const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    const result = await interp.drain();
    expect(result.endedDead).toBe(true);
    expect(result.dead.map((d) => [d.jobId, d.class])).toEqual([["bad", "conflict"]]);
    const run = await journal.runs.latest("bad");
    expect(run?.state).toBe("dead");
    expect(run?.class).toBe("conflict");
    expect(run?.lastError).toContain("after-bad");
    expect((await journal.ledger.forJob("bad", 1))[0]?.state).toBe("failed");
    expect((await journal.runs.latest("after-bad"))?.state).toBe("done");
  });

  it("skips a file.write superseded by a later recorded write instead of rolling it back", async () => {
    const { ws, journal, effects } = await setup();
    const w = (jobId: string, content: string) => ({
      jobId,
      agent: "writer",
      effects: [{ kind: "file.write" as const, root: "outbox", path: "same.txt", content }],
    });
    await recordAll(journal, ws.config, [w("w1", "one\n")]);
    const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    await interp.drain();
    await recordAll(journal, ws.config, [w("w2", "two\n")]);
    await interp.drain();
    await journal.runs.replay({ jobIds: ["w1"] }, { actor: "test" });
    await interp.drain();
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(`${ws.outboxPath}/same.txt`, "utf8")).toBe("two\n");
    const row = (await journal.ledger.forJob("w1", 2))[0];
    expect(row?.state).toBe("skipped");
    expect(String(row?.detail?.reason)).toContain("w2");
  });

  it("retries a transient failure with backoff, then goes dead after maxAttempts", async () => {
    const { ws, journal } = await setup({ maxAttempts: 3, backoffMs: [10] });
    // A repo alias whose path does not exist: TARGET_MISSING, class infrastructure (retryable).
    const repos = ws.config.sections.repos as Record<string, object>;
    const parsed = {
      ...ws.config,
      sections: {
        ...ws.config.sections,
        repos: { ...repos, gone: { ...repos.site, path: `${ws.dir}/nope` } },
      },
    };
    const out = {
      jobId: "missing",
      agent: "writer",
      effects: [
        {
          kind: "git.patch" as const,
          repo: "gone",
          message: "m",
          patch: newFilePatch("x.txt", ["x"]),
        },
      ],
    };
    await recordAll(journal, parsed, [out]);
    const interp = createInterpreter({
      config: parsed,
      journal,
      effects: openEffects(parsed),
      logger: silent,
    });
    const result = await interp.drain();
    expect(result.runs.failed).toBe(2);
    expect(result.runs.dead).toBe(1);
    const run = await journal.runs.latest("missing");
    expect(run?.state).toBe("dead");
    expect(run?.attempts).toBe(3);
    expect(["transient", "infrastructure"]).toContain(run?.class);
    expect(run?.lastError).toContain("after 3 attempts");
  });

  it("retries a repo locked by another process (transient), then succeeds once the lock is free", async () => {
    // maxAttempts: the run retries until the lock is free, however slowly tries come.
    const { ws, journal } = await setup({ maxAttempts: 1_000, backoffMs: [100] });
    const effects = openEffects(ws.config, { kinds: kindsOf(ws.config, { lockTimeoutMs: 150 }) });
    cleanup.push(() => effects.close());
    // Another process holds the repo's lock until the test has seen an apply fail LOCKED.
    mkdirSync(join(ws.repoPath, ".git/idem"), { recursive: true });
    const held = join(ws.dir, "lock-held");
    const release = join(ws.dir, "lock-release");
    const holder = spawn("flock", [
      "-x",
      join(ws.repoPath, ".git/idem/lock"),
      "-c",
      `touch '${held}'; while [ ! -e '${release}' ]; do sleep 0.05; done`,
    ]);
    const released = new Promise((r) => holder.on("exit", r));
    cleanup.push(async () => {
      writeFileSync(release, ""); // also when the test fails before it lets go
      await released;
    });
    await waitFor("the other process to hold the lock", () => existsSync(held));
    const outputs = [mixedOutput("locked")];
    await recordAll(journal, ws.config, outputs);
    const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    const draining = interp.drain();
    await waitFor(
      "a failed try",
      async () => (await journal.events.list({ jobId: "locked", type: "run.failed" })).length,
    );
    writeFileSync(release, "");
    const result = await draining;
    await released;
    expect(result.runs.failed).toBeGreaterThanOrEqual(1);
    expect(result.runs.done).toBe(1);
    const failures = await journal.events.list({ jobId: "locked", type: "run.failed" });
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures.every((f) => f.data?.class === "transient")).toBe(true);
    expect(String(failures[0]?.data?.error)).toMatch(/LOCKED|lock/);
    expect(await verify(ws, journal, outputs)).toMatchObject({ duplicates: [], missing: [] });
  });

  it("retries a branch whose ref lock another git process holds, and never removes that lock", async () => {
    // maxAttempts: the run retries until the test removes the lock, however slowly tries come.
    const { ws, journal, effects } = await setup({ maxAttempts: 1_000, backoffMs: [100] });
    const lock = join(ws.repoPath, ".git/refs/heads/main.lock");
    writeFileSync(lock, "");
    const outputs = [mixedOutput("ref-locked")];
    await recordAll(journal, ws.config, outputs);
    const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    const draining = interp.drain();
    await waitFor(
      "a failed try",
      async () => (await journal.events.list({ jobId: "ref-locked", type: "run.failed" })).length,
    );
    expect(existsSync(lock)).toBe(true); // the other process's lock is not idem's to remove
    rmSync(lock);
    const result = await draining;
    expect(result.runs.done).toBe(1);
    const failures = await journal.events.list({ jobId: "ref-locked", type: "run.failed" });
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures.every((f) => f.data?.class === "transient")).toBe(true);
    expect(await verify(ws, journal, outputs)).toMatchObject({ duplicates: [], missing: [] });
  });

  it("makes an unanswered request to a target without idempotency keys uncertain until a human resolves it", async () => {
    const hits: string[] = [];
    const server = createServer((req) => {
      hits.push(String(req.headers["idempotency-key"]));
      // never answers
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    cleanup.push(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    const { ws, journal, effects } = await setup(
      {},
      // The request reaches the server long before the timeout, however busy the machine.
      { http: { targets: { hooks: { baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 5_000 } } } },
    );
    const out = {
      jobId: "hook",
      agent: "writer",
      effects: [
        {
          kind: "http.request" as const,
          target: "hooks",
          method: "POST" as const,
          path: "/x",
          body: "{}",
        },
        { kind: "file.write" as const, root: "outbox", path: "after-hook.txt", content: "ok\n" },
      ],
    };
    await recordAll(journal, ws.config, [out]);
    const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    const first = await interp.drain();
    expect(first.dead.map((d) => [d.jobId, d.class])).toEqual([["hook", "uncertain"]]);
    expect((await journal.ledger.forJob("hook", 1))[0]?.state).toBe("uncertain");
    expect(hits).toEqual(["hook/0"]);

    // Nothing is re-sent while it waits for a human.
    expect((await interp.drain()).runs.done).toBe(0);
    expect(hits).toHaveLength(1);

    await journal.ledger.resolve("hook", {
      decision: "applied",
      reason: "the hook's log shows it arrived",
      actor: "tester",
    });
    const second = await interp.drain();
    expect(second.runs.done).toBe(1);
    expect(hits).toHaveLength(1);
    expect((await journal.ledger.forJob("hook", 1)).map((e) => e.state)).toEqual([
      "applied",
      "applied",
    ]);
  });

  it("says it stopped once however often stop is called (a second signal)", async () => {
    const { ws, journal, effects } = await setup();
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(line) });
    const interpreter = createInterpreter({ config: ws.config, journal, effects, logger });
    interpreter.start();
    await Promise.all([interpreter.stop(), interpreter.stop()]);
    await interpreter.stop();
    expect(lines.filter((l) => l.includes('"interpreter.stopped"'))).toHaveLength(1);
  });

  it("releases its lease on stop and another interpreter finishes the run", async () => {
    const { ws, journal, effects } = await setup();
    const outputs = chainOutputs("stop", 10);
    await recordAll(journal, ws.config, outputs);
    const a = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    const draining = a.drain();
    await new Promise((r) => setTimeout(r, 150));
    await a.stop();
    const partial = await draining;
    expect(partial.runs["lease-lost"]).toBe(0);
    const b = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    await b.drain();
    expect(await verify(ws, journal, outputs)).toMatchObject({
      duplicates: [],
      missing: [],
      notDone: [],
    });
  });

  it("stops and says so (drain rejects, fatal resolves) when the journal's fsync fails; a restarted one finishes with no duplicate", async () => {
    const { ws, journal, effects } = await setup({ leaseMs: 500 });
    const outputs = chainOutputs("fsync", 12);
    await recordAll(journal, ws.config, outputs);
    // An fsync that fails with EIO cannot be caused on this machine's disk: the journal's own
    // injection point stands in for it, from the fifth fsync on.
    let fsyncs = 0;
    const eio = Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    const failing = await openSqliteJournal(ws.config.journal.path, {
      fdatasync: (fd, done) =>
        ++fsyncs >= 5 ? setImmediate(() => done(eio)) : fdatasync(fd, done),
    });
    cleanup.push(() => failing.close());
    const a = createInterpreter({ config: ws.config, journal: failing, effects, logger: silent });
    await expect(a.drain()).rejects.toMatchObject({ code: "IO", message: /EIO/ });
    expect(await a.fatal).toBe(failing.failure);
    // Another interpreter on the failed handle stops at once, in its long-running form too.
    const again = createInterpreter({
      config: ws.config,
      journal: failing,
      effects,
      logger: silent,
    });
    again.start();
    expect(await again.fatal).toBe(failing.failure);
    await again.stop();

    // The restarted process (a healthy handle) waits out the failed one's short leases and
    // finishes, once each; its own leases are long, so a busy machine cannot make it lose them.
    const config = { ...ws.config, interpreter: { ...ws.config.interpreter, leaseMs: 120_000 } };
    const b = createInterpreter({ config, journal, effects, logger: silent });
    const result = await b.drain();
    expect(result.endedDead).toBe(false);
    expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
  });
});
