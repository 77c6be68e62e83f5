import { fdatasync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { openSqliteJournal } from "../src/index.js";
import { isBusy } from "../src/store/sqlite/busy.js";
import { CLAIM, output, tempJournal } from "./helpers.js";

describe("SQLite only: its adapter's outputs (shared commits, triggers and prune guard on its file; both stores: test/contract)", () => {
  it("records an output once; the same content again is a duplicate", async () => {
    await using t = await tempJournal();
    const first = await t.journal.outputs.record(output("j1"), {
      source: "cli",
      targets: ["repo:site@main"],
    });
    const again = await t.journal.outputs.record(output("j1"), {
      source: "http",
      targets: ["repo:site@main"],
    });
    expect(first.status).toBe("recorded");
    expect(again.status).toBe("duplicate");
    expect((await t.journal.status()).outputs).toBe(1);
    expect((await t.journal.events.list({ jobId: "j1" })).map((e) => e.type)).toEqual([
      "output.recorded",
      "output.duplicate",
    ]);
  });

  it("refuses a conflicting output and leaves the first byte-for-byte unchanged, with a rejection row", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("j1", "first"), { source: "cli", targets: [] });
    const before = t.journal.database.prepare("SELECT * FROM outputs").all();
    const r = await t.journal.outputs.record(output("j1", "second"), {
      source: "cli",
      targets: [],
    });
    expect(r.status).toBe("conflict");
    expect(t.journal.database.prepare("SELECT * FROM outputs").all()).toEqual(before);
    const rej = await t.journal.outputs.rejections("j1");
    expect(rej).toHaveLength(1);
    expect(JSON.parse(rej[0]?.body ?? "{}").summary).toBe("second");
    expect((await t.journal.outputs.get("j1"))?.output.summary).toBe("first");
  });

  it("answers concurrent records sharing one commit each as if alone: first call wins", async () => {
    await using t = await tempJournal();
    const calls = Array.from({ length: 60 }, (_, i) =>
      output(`job-${i % 20}`, `v${Math.floor(i / 20) % 2}`),
    );
    const results = await Promise.all(
      calls.map((o) => t.journal.outputs.record(o, { source: "cli", targets: [] })),
    );
    expect(results.slice(0, 20).every((r) => r.status === "recorded")).toBe(true);
    expect(results.slice(20, 40).every((r) => r.status === "conflict")).toBe(true);
    expect(results.slice(40).every((r) => r.status === "duplicate")).toBe(true);
    expect((await t.journal.outputs.get("job-3"))?.output.summary).toBe("v0");
    expect((await t.journal.status()).rejections).toBe(20);
  });

  it("fails only the write that throws inside a shared commit; the others commit, nothing half-written", async () => {
    await using t = await tempJournal();
    // A target that SQLite cannot bind throws after the output and run rows of its write were
    // inserted: the write must leave neither behind, and its neighbours must not suffer for it.
    const unbindable = [{}] as unknown as string[];
    const results = await Promise.allSettled([
      t.journal.outputs.record(output("a"), { source: "cli", targets: ["repo:site@main"] }),
      t.journal.outputs.record(output("half"), { source: "cli", targets: unbindable }),
      t.journal.outputs.record(output("b"), { source: "cli", targets: ["repo:site@main"] }),
      t.journal.events.append({ jobId: "a", type: "note", actor: "test" }),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    expect(await t.journal.outputs.has("half")).toBe(false);
    expect(await t.journal.events.list({ jobId: "half" })).toEqual([]);
    expect((await t.journal.status()).outputs).toBe(2);
    const runs = t.journal.database.prepare("SELECT job_id FROM runs ORDER BY job_id").all();
    expect(runs).toEqual([{ job_id: "a" }, { job_id: "b" }]);
    expect((await t.journal.events.list({ jobId: "a" })).map((e) => e.type)).toEqual([
      "output.recorded",
      "note",
    ]);
  });

  it("refuses UPDATE and DELETE of outputs at the database (invariant 2)", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("j1"), { source: "cli", targets: [] });
    const db = t.journal.database;
    expect(() => db.prepare("UPDATE outputs SET body = 'x'").run()).toThrow(/immutable/);
    expect(() => db.prepare("DELETE FROM outputs").run()).toThrow(/prune/);
    expect(() => db.prepare("UPDATE events SET type = 'x'").run()).toThrow(/append-only/);
    await t.journal.outputs.record(output("j1", "other"), { source: "cli", targets: [] });
    expect(() => db.prepare("DELETE FROM rejections").run()).toThrow(/prune/);
    await t.journal.jobs.enqueue({ jobId: "q", agent: "writer", input: { a: 1 } });
    expect(() => db.prepare("UPDATE job_inputs SET input = '{}'").run()).toThrow(/immutable/);
    expect(() => db.prepare("DELETE FROM job_inputs").run()).toThrow(/prune/);
    expect((await t.journal.jobs.get("q"))?.input).toEqual({ a: 1 });
    expect(await t.journal.maintenance.integrity()).toEqual([]);
    // Past the guard (as only prune may), a job without its input is reported, like a lost trigger.
    db.prepare("INSERT INTO prune_guard (id) VALUES (1)").run();
    db.prepare("DELETE FROM job_inputs").run();
    db.prepare("DROP TRIGGER events_no_update").run();
    expect(await t.journal.maintenance.integrity()).toEqual([
      "trigger events_no_update is missing: outputs are not protected",
      "job q has no input",
    ]);
  });

  it("prunes only through the guard and keeps what is still active", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("old"), { source: "cli", targets: [] });
    await t.journal.outputs.record(output("busy"), { source: "cli", targets: ["repo:site@main"] });
    const c = await t.journal.runs.claim(CLAIM);
    expect(c?.output.jobId).toBe("old");
    if (c) await t.journal.runs.complete(c.lease);
    t.clock.advance(10_000);
    const archived: string[] = [];
    const r = await t.journal.maintenance.prune({
      before: t.clock.now(),
      archive: (e) => void archived.push(e.output.jobId),
    });
    expect(r.outputs).toBe(1);
    expect(archived).toEqual(["old"]);
    expect(await t.journal.outputs.has("old")).toBe(false);
    expect(await t.journal.outputs.has("busy")).toBe(true);
    expect(() => t.journal.database.prepare("DELETE FROM outputs").run()).toThrow(/prune/);
  });

  it("lists outputs with their latest run state, filtered", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    t.clock.advance(1000);
    await t.journal.outputs.record(
      { ...output("b"), agent: "reviewer" },
      { source: "cli", targets: [] },
    );
    const c = await t.journal.runs.claim(CLAIM);
    if (c) await t.journal.runs.complete(c.lease);
    expect((await t.journal.outputs.list()).map((o) => [o.jobId, o.state])).toEqual([
      ["a", "done"],
      ["b", "pending"],
    ]);
    expect((await t.journal.outputs.list({ agent: "reviewer" })).map((o) => o.jobId)).toEqual([
      "b",
    ]);
    expect((await t.journal.outputs.list({ since: t.clock.now() })).map((o) => o.jobId)).toEqual([
      "b",
    ]);
    expect((await t.journal.outputs.list({ state: "done" })).map((o) => o.jobId)).toEqual(["a"]);
    const s = await t.journal.status();
    expect(s.runs).toMatchObject({ done: 1, pending: 1 });
  });
});

describe("SQLite only: its adapter's runs, read through its file (both stores: test/contract/runs, ledger)", () => {
  it("claims in recording order per target and lets other targets proceed", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: ["repo:site@main"] });
    await t.journal.outputs.record(output("b"), { source: "cli", targets: ["repo:site@main"] });
    await t.journal.outputs.record(output("c"), { source: "cli", targets: ["root:outbox"] });
    const first = await t.journal.runs.claim(CLAIM);
    const second = await t.journal.runs.claim(CLAIM);
    const third = await t.journal.runs.claim(CLAIM);
    expect([first?.output.jobId, second?.output.jobId, third]).toEqual(["a", "c", undefined]);
    if (first) await t.journal.runs.complete(first.lease);
    expect((await t.journal.runs.claim(CLAIM))?.output.jobId).toBe("b");
  });

  it("holds a run with several targets ahead on each of them, and forgets the targets of finished runs", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: ["root:x", "root:y"] });
    await t.journal.outputs.record(output("b"), { source: "cli", targets: ["root:y"] });
    await t.journal.outputs.record(output("c"), { source: "cli", targets: ["root:x"] });
    await t.journal.outputs.record(output("d"), { source: "cli", targets: ["root:z"] });
    const a = await t.journal.runs.claim(CLAIM);
    expect(a?.output.jobId).toBe("a");
    expect((await t.journal.runs.claim(CLAIM))?.output.jobId).toBe("d");
    expect(await t.journal.runs.claim(CLAIM)).toBeUndefined();
    if (a) await t.journal.runs.complete(a.lease);
    const next = [await t.journal.runs.claim(CLAIM), await t.journal.runs.claim(CLAIM)];
    expect(next.map((c) => c?.output.jobId)).toEqual(["b", "c"]);
    for (const c of next) if (c) await t.journal.runs.complete(c.lease);
    const active = t.journal.database.prepare("SELECT target, run_id FROM active_targets").all();
    expect(active).toEqual([{ target: "root:z", run_id: 4 }]);
  });

  it("puts a resolved run back in its place on its target, ahead of runs recorded after it", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: ["root:x"] });
    const c = await t.journal.runs.claim(CLAIM);
    if (!c) throw new Error("claim");
    await t.journal.ledger.intend(c.lease, {
      key: "a/0",
      idx: 0,
      kind: "http.request",
      specHash: "h",
    });
    await t.journal.ledger.settle(c.lease, "a/0", "uncertain");
    await t.journal.runs.markDead(c.lease, { class: "uncertain", error: "timeout after send" });
    await t.journal.outputs.record(output("b"), { source: "cli", targets: ["root:x"] });
    await t.journal.ledger.resolve("a", {
      decision: "applied",
      reason: "saw it in the webhook logs",
      actor: "oncall",
    });
    // a is pending again and first on root:x: b waits until a is done.
    const again = await t.journal.runs.claim(CLAIM);
    expect(again?.output.jobId).toBe("a");
    expect(await t.journal.runs.claim(CLAIM)).toBeUndefined();
    if (again) await t.journal.runs.complete(again.lease);
    expect((await t.journal.runs.claim(CLAIM))?.output.jobId).toBe("b");
  });

  it("refuses a stale lease holder after a takeover and counts the expiry, not an attempt", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    const stale = await t.journal.runs.claim(CLAIM);
    expect(stale).toBeDefined();
    expect(await t.journal.runs.claim(CLAIM)).toBeUndefined();
    t.clock.advance(1001);
    const fresh = await t.journal.runs.claim({ ...CLAIM, owner: "other" });
    expect(fresh?.takeover).toBe(true);
    expect(fresh?.run.leaseExpiries).toBe(1);
    expect(fresh?.run.attempts).toBe(0);
    if (!stale || !fresh) return;
    const key = "a/0";
    for (const write of [
      () => t.journal.runs.complete(stale.lease),
      () =>
        t.journal.ledger.intend(stale.lease, { key, idx: 0, kind: "git.commit", specHash: "h" }),
      () => t.journal.runs.fail(stale.lease, { class: "transient", error: "x", nextAt: 0 }),
      () => t.journal.runs.extendLease(stale.lease, 1000),
    ]) {
      await expect(write()).rejects.toSatisfy((e) => isIdemError(e, "LEASE_LOST"));
    }
    await t.journal.runs.complete(fresh.lease);
    expect((await t.journal.runs.latest("a"))?.state).toBe("done");
  });

  it("goes dead after maxLeaseExpiries takeovers and releases its target, naming the runs that went ahead", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: ["root:x"] });
    await t.journal.outputs.record(output("b"), { source: "cli", targets: ["root:x"] });
    for (let i = 0; i < 3; i++) {
      const c = await t.journal.runs.claim(CLAIM);
      expect(c?.output.jobId).toBe(i < 3 ? "a" : "b");
      t.clock.advance(1001);
    }
    const next = await t.journal.runs.claim(CLAIM);
    expect(next?.output.jobId).toBe("b");
    const a = await t.journal.runs.latest("a");
    expect(a?.state).toBe("dead");
    expect(a?.class).toBe("infrastructure");
    expect(a?.lastError).toMatch(/go ahead: b/);
  });

  it("fails with a retry time, then is due again", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    const c = await t.journal.runs.claim(CLAIM);
    if (!c) throw new Error("claim");
    await t.journal.runs.fail(c.lease, {
      class: "transient",
      error: "locked",
      nextAt: t.clock.now() + 500,
    });
    expect(await t.journal.runs.claim(CLAIM)).toBeUndefined();
    expect(await t.journal.runs.nextDueAt()).toBe(t.clock.now() + 500);
    t.clock.advance(500);
    const again = await t.journal.runs.claim(CLAIM);
    expect(again?.run.attempts).toBe(1);
    expect(again?.takeover).toBe(false);
  });

  it("keeps an effects ledger per generation and replays into an empty one", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: ["repo:site@main"] });
    const c = await t.journal.runs.claim(CLAIM);
    if (!c) throw new Error("claim");
    const e = await t.journal.ledger.intend(c.lease, {
      key: "a/0",
      idx: 0,
      kind: "git.commit",
      specHash: "h",
      detail: { base: "b1" },
    });
    expect(e.state).toBe("intended");
    const again = await t.journal.ledger.intend(c.lease, {
      key: "a/0",
      idx: 0,
      kind: "git.commit",
      specHash: "h",
    });
    expect(again.attempts).toBe(2);
    expect(again.detail).toEqual({ base: "b1" });
    await t.journal.ledger.settle(c.lease, "a/0", "applied", { commit: "c1" });
    await t.journal.runs.complete(c.lease);
    const runs = await t.journal.runs.replay({ all: true }, { actor: "human" });
    expect(runs.map((r) => r.generation)).toEqual([2]);
    expect(await t.journal.ledger.forJob("a", 2)).toEqual([]);
    expect((await t.journal.ledger.history("a/0")).map((x) => [x.generation, x.state])).toEqual([
      [1, "applied"],
    ]);
    // An active run is not replayed again beside itself.
    expect(await t.journal.runs.replay({ jobIds: ["a"] }, { actor: "human" })).toEqual([]);
  });

  it("resolves an uncertain effect of a dead run with a reason and returns the run to pending", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    const c = await t.journal.runs.claim(CLAIM);
    if (!c) throw new Error("claim");
    await t.journal.ledger.intend(c.lease, {
      key: "a/0",
      idx: 0,
      kind: "http.request",
      specHash: "h",
    });
    await t.journal.ledger.settle(c.lease, "a/0", "uncertain");
    await t.journal.runs.markDead(c.lease, { class: "uncertain", error: "timeout after send" });
    await expect(
      t.journal.ledger.resolve("a", { decision: "applied", reason: " ", actor: "oncall" }),
    ).rejects.toSatisfy((e) => isIdemError(e, "INVALID_INPUT"));
    const r = await t.journal.ledger.resolve("a", {
      decision: "applied",
      reason: "saw it in the webhook logs",
      actor: "oncall",
    });
    expect(r.state).toBe("applied");
    expect((await t.journal.runs.latest("a"))?.state).toBe("pending");
    const ev = (await t.journal.events.list({ jobId: "a", type: "effect.resolved" }))[0];
    expect(ev?.actor).toBe("oncall");
    expect(ev?.data?.reason).toBe("saw it in the webhook logs");
  });
});

describe("SQLite only: its adapter's jobs under its injected clock (both stores: test/contract/jobs)", () => {
  it("enqueues once, refuses another input under the same ID, and delivers with a lease", async () => {
    await using t = await tempJournal();
    const job = { jobId: "j1", agent: "writer", input: { n: 1 } };
    expect((await t.journal.jobs.enqueue(job)).status).toBe("enqueued");
    expect((await t.journal.jobs.enqueue(job)).status).toBe("duplicate");
    expect((await t.journal.jobs.enqueue({ ...job, input: { n: 2 } })).status).toBe("conflict");
    const d = await t.journal.jobs.claimNext({ owner: "x", leaseMs: 100 });
    expect(d?.lease.deliveries).toBe(1);
    expect(await t.journal.jobs.claimNext({ owner: "x", leaseMs: 100 })).toBeUndefined();
    expect((await t.journal.jobs.claim(job, { owner: "y", leaseMs: 100 })).status).toBe("held");
    await t.journal.outputs.record(
      { jobId: "j1", agent: "writer", effects: [] },
      { source: "executor", targets: [] },
    );
    expect((await t.journal.jobs.get("j1"))?.state).toBe("done");
    expect((await t.journal.jobs.claim(job, { owner: "y", leaseMs: 100 })).status).toBe("recorded");
    t.clock.advance(200);
    expect(await t.journal.jobs.claimNext({ owner: "x", leaseMs: 100 })).toBeUndefined();
  });

  it("redelivers after a lost lease and dead-letters after maxDeliver, then retries", async () => {
    await using t = await tempJournal();
    await t.journal.jobs.enqueue({ jobId: "j1", agent: "writer", input: null });
    const first = await t.journal.jobs.claimNext({ owner: "x", leaseMs: 100, maxDeliver: 2 });
    if (!first) throw new Error("deliver");
    await t.journal.jobs.fail(first.lease, {
      class: "transient",
      error: "exit 1",
      nextAt: t.clock.now() + 50,
    });
    expect((await t.journal.jobs.get("j1"))?.lastClass).toBe("transient");
    t.clock.advance(50);
    const second = await t.journal.jobs.claimNext({ owner: "x", leaseMs: 100, maxDeliver: 2 });
    expect(second?.lease.deliveries).toBe(2);
    t.clock.advance(101);
    expect(
      await t.journal.jobs.claimNext({ owner: "x", leaseMs: 100, maxDeliver: 2 }),
    ).toBeUndefined();
    const dl = await t.journal.deadLetters.list({ unresolved: true });
    expect(dl.map((d) => [d.jobId, d.class, d.deliveries])).toEqual([["j1", "infrastructure", 2]]);
    expect((await t.journal.status()).deadLetters).toBe(1);
    expect(
      (await t.journal.deadLetters.resolve("j1", { action: "retry", actor: "me" })).retries,
    ).toBe(1);
    expect(
      (await t.journal.jobs.claimNext({ owner: "x", leaseMs: 100, maxDeliver: 2 }))?.lease
        .deliveries,
    ).toBe(1);
  });

  it("answers a claim 'recorded' for a job whose output was submitted before any delivery, writing nothing", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(
      { jobId: "s1", agent: "writer", effects: [] },
      { source: "http", targets: [] },
    );
    const job = { jobId: "s1", agent: "writer", input: { n: 1 } };
    expect((await t.journal.jobs.claim(job, { owner: "x", leaseMs: 60_000 })).status).toBe(
      "recorded",
    );
    expect(await t.journal.jobs.get("s1")).toBeUndefined();
  });

  it("lists for the outbox republish the queued and running jobs without an output, since a time", async () => {
    await using t = await tempJournal();
    const job = (jobId: string) => ({ jobId, agent: "writer", input: { jobId } });
    await t.journal.jobs.enqueue(job("old"));
    t.clock.advance(1_000);
    const since = t.clock.now();
    for (const id of ["queued", "running", "done", "dead"]) await t.journal.jobs.enqueue(job(id));
    const running = await t.journal.jobs.claim(job("running"), { owner: "x", leaseMs: 60_000 });
    expect(running.status).toBe("acquired");
    await t.journal.jobs.claim(job("done"), { owner: "x", leaseMs: 60_000 });
    await t.journal.outputs.record(
      { jobId: "done", agent: "writer", effects: [] },
      { source: "executor", targets: [] },
    );
    await t.journal.deadLetters.add("dead", { class: "logic", error: "broke", deliveries: 3 });
    const pending = await t.journal.jobs.pending({ since });
    expect(pending.map((j) => [j.jobId, j.state, j.input])).toEqual([
      ["queued", "queued", { jobId: "queued" }],
      ["running", "running", { jobId: "running" }],
    ]);
    expect((await t.journal.jobs.pending()).map((j) => j.jobId)).toEqual([
      "old",
      "queued",
      "running",
    ]);
  });
});

describe("SQLite only: its own group fsync (synchronous FULL; PostgreSQL's commit is the server's)", () => {
  /** An fdatasync that waits until the test lets it run. */
  function heldFsync() {
    const waiting: (() => void)[] = [];
    return {
      fdatasync: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => {
        waiting.push(() => fdatasync(fd, done));
      },
      waiting,
      release() {
        for (const run of waiting.splice(0)) run();
      },
    };
  }
  const settled = async (p: Promise<unknown>) => {
    let done = false;
    void p.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    await new Promise((r) => setTimeout(r, 20));
    return done;
  };

  it("answers a record only once an fsync that began after its commit is done, and shares fsyncs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-fsync-"));
    const held = heldFsync();
    const j = await openSqliteJournal(join(dir, "j.db"), { fdatasync: held.fdatasync });
    try {
      const first = j.outputs.record(output("a"), { source: "cli", targets: [] });
      expect(await settled(first)).toBe(false);
      expect(held.waiting).toHaveLength(1);
      // Committed already (another process could read it), answered only after the fsync.
      const reader = await openSqliteJournal(join(dir, "j.db"), { readonly: true });
      expect(await reader.outputs.has("a")).toBe(true);
      await reader.close();
      // Writes that commit while that fsync runs wait for the next one, all of them together.
      const more = Array.from({ length: 20 }, (_, i) =>
        j.outputs.record(output(`b${i}`), { source: "cli", targets: [] }),
      );
      expect(await settled(Promise.all(more))).toBe(false);
      held.release(); // the first fsync: answers "a" only
      expect((await first).status).toBe("recorded");
      expect(await settled(Promise.all(more))).toBe(false);
      expect(held.waiting).toHaveLength(1);
      held.release();
      expect((await Promise.all(more)).every((r) => r.status === "recorded")).toBe(true);
      expect(j.fsyncs).toBe(2);
      // Claims and leases do not wait for an fsync of their own.
      const c = await j.runs.claim({ owner: "t", leaseMs: 60_000, maxLeaseExpiries: 3 });
      expect(c?.output.jobId).toBe("a");
      expect(j.fsyncs).toBe(2);
    } finally {
      held.release();
      await j.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers claims and notes that share a commit with a record without waiting for its fsync", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-fsync-"));
    const held = heldFsync();
    const j = await openSqliteJournal(join(dir, "j.db"), { fdatasync: held.fdatasync });
    try {
      const job = { jobId: "c", agent: "writer", input: { n: 1 } };
      await j.jobs.enqueue(job, { durable: false });
      expect(held.waiting).toHaveLength(0);
      // One batch: a durable record, a claim and a stream-seq note.
      const rec = j.outputs.record(output("a"), { source: "cli", targets: [] });
      const claim = j.jobs.claim(job, { owner: "t", leaseMs: 60_000, streamSeq: 7 });
      const note = j.jobs.setStreamSeq("c", 7);
      expect(await settled(claim)).toBe(true);
      expect(await settled(note)).toBe(true);
      expect((await claim).status).toBe("acquired");
      expect(await settled(rec)).toBe(false);
      expect(held.waiting).toHaveLength(1);
      held.release();
      expect((await rec).status).toBe("recorded");
      expect(j.fsyncs).toBe(1);
    } finally {
      held.release();
      await j.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("makes a yes from has() durable before answering it: a redelivery is acked on it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-fsync-"));
    const writer = await openSqliteJournal(join(dir, "j.db"), { synchronous: "NORMAL" });
    await writer.outputs.record(output("a"), { source: "cli", targets: [] });
    const held = heldFsync();
    const j = await openSqliteJournal(join(dir, "j.db"), { fdatasync: held.fdatasync });
    try {
      expect(await j.outputs.has("nope")).toBe(false);
      expect(held.waiting).toHaveLength(0);
      const yes = j.outputs.has("a");
      expect(await settled(yes)).toBe(false);
      const claim = j.jobs.claim(
        { jobId: "a", agent: "writer", input: {} },
        { owner: "t", leaseMs: 1 },
      );
      expect(await settled(claim)).toBe(false);
      // The claim's "recorded" waits for an fsync that began after it looked: the next one.
      held.release();
      expect(await yes).toBe(true);
      expect(await settled(claim)).toBe(false);
      held.release();
      expect((await claim).status).toBe("recorded");
    } finally {
      held.release();
      await j.close();
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails every waiter and every later write of the process when an fsync fails", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-fsync-"));
    const eio = Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    const j = await openSqliteJournal(join(dir, "j.db"), {
      fdatasync: (_fd, done) => setImmediate(() => done(eio)),
    });
    try {
      expect(j.failure).toBeUndefined();
      await expect(j.outputs.record(output("a"), { source: "cli", targets: [] })).rejects.toSatisfy(
        (e) => isIdemError(e, "IO") && /fsync failed \(EIO\)/.test((e as Error).message),
      );
      // Sticky: the handle says why it is done, for health checks and the processes' loops.
      expect(j.failure).toMatchObject({ code: "IO", message: expect.stringMatching(/restart/) });
      await expect(j.outputs.record(output("b"), { source: "cli", targets: [] })).rejects.toSatisfy(
        (e) => isIdemError(e, "IO"),
      );
      await expect(j.jobs.enqueue({ jobId: "c", agent: "writer", input: {} })).rejects.toSatisfy(
        (e) => isIdemError(e, "IO"),
      );
      expect(await j.outputs.has("b")).toBe(false); // nothing written after the failure
    } finally {
      await j.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fsyncs a write that comes alone once, before answering it", async () => {
    await using t = await tempJournal({ synchronous: "FULL" });
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    expect(t.journal.fsyncs).toBe(1);
    await t.journal.outputs.record(output("b"), { source: "cli", targets: [] });
    await t.journal.runs.claim(CLAIM); // a claim waits for no fsync
    expect(t.journal.fsyncs).toBe(2);
    expect(t.journal.inlineFsyncs).toBe(2); // nothing else was going on: inline, as SQLite would
  });

  it("fsyncs off the event loop in a pipeline: a lone write just after a claim or note does not block it", async () => {
    await using t = await tempJournal({ synchronous: "FULL" });
    const job = { jobId: "j", agent: "writer", input: {} };
    await t.journal.jobs.enqueue(job, { durable: false });
    const claim = await t.journal.jobs.claim(job, { owner: "o", leaseMs: 60_000 });
    expect(claim.status).toBe("acquired");
    expect(t.journal.fsyncs).toBe(0);
    await t.journal.outputs.record(output("j"), { source: "executor", targets: [] });
    expect(t.journal.fsyncs).toBe(1);
    expect(t.journal.inlineFsyncs).toBe(0);
    // The fsync covered the claim too, and a lone write with no claim in the last 10 ms is inline.
    await new Promise((r) => setTimeout(r, 20));
    await t.journal.outputs.record(output("k"), { source: "cli", targets: [] });
    expect(t.journal.inlineFsyncs).toBe(1);
  });

  it("leaves NORMAL to SQLite: no fsync of its own", async () => {
    await using t = await tempJournal({ synchronous: "NORMAL" });
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    expect(await t.journal.outputs.has("a")).toBe(true);
    expect(t.journal.fsyncs).toBe(0);
  });
});

describe("SQLite only: which errors a writer waits out (the busy loop of BEGIN IMMEDIATE)", () => {
  it("waits on SQLITE_BUSY and its extended codes (recovery of another process's WAL index), nothing else", () => {
    const err = (code: string) => Object.assign(new Error("database is locked"), { code });
    expect(isBusy(err("SQLITE_BUSY"))).toBe(true);
    expect(isBusy(err("SQLITE_BUSY_RECOVERY"))).toBe(true);
    expect(isBusy(err("SQLITE_BUSY_TIMEOUT"))).toBe(true);
    expect(isBusy(err("SQLITE_BUSYNESS"))).toBe(false);
    expect(isBusy(err("SQLITE_LOCKED"))).toBe(false);
    expect(isBusy(err("SQLITE_CONSTRAINT_UNIQUE"))).toBe(false);
    expect(isBusy(new Error("no code"))).toBe(false);
    expect(isBusy(null)).toBe(false);
  });
});
