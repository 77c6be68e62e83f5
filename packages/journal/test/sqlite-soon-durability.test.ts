import { fdatasync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteJournal } from "../src/index.js";
import { SOON_MS } from "../src/store/sqlite/wal-fsync.js";
import { CLAIM, output } from "./helpers.js";

/** An fdatasync that waits until the test lets it run, counting the ones that ran. */
function heldFsync() {
  const waiting: (() => void)[] = [];
  let done = 0;
  return {
    fdatasync: (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      waiting.push(() =>
        fdatasync(fd, (err) => {
          done += 1;
          cb(err);
        }),
      );
    },
    waiting,
    done: () => done,
    release() {
      for (const run of waiting.splice(0)) run();
    },
  };
}

/** Waits until `cond` holds, or 30 s have gone (the assertion after it then fails): a busy machine. */
async function until(cond: () => boolean): Promise<void> {
  for (const end = Date.now() + 30_000; !cond() && Date.now() < end; ) await sleep(5);
}

/** True when `p` settles within 20 ms. */
async function answered(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  const mark = () => {
    done = true;
  };
  void p.then(mark, mark);
  await new Promise((r) => setTimeout(r, 20));
  return done;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("SQLite only: what is durable when (synchronous FULL: an intent now, a probed settle and a completion soon)", () => {
  it("answers an intent only after an fsync, a soon settle and completion at once, and the next intent's fsync carries them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-soon-"));
    const held = heldFsync();
    const j = await openSqliteJournal(join(dir, "j.db"), { fdatasync: held.fdatasync });
    try {
      for (const id of ["a", "b"]) await recorded(j, id, held);
      const effect = (jobId: string) => ({
        key: `${jobId}:0`,
        idx: 0,
        kind: "git.commit",
        specHash: "h",
      });
      const a = await j.runs.claim(CLAIM);
      if (!a) throw new Error("no claim");
      const fsyncs = j.fsyncs;
      // The intent must be on disk before the apply that follows it: not answered before its fsync.
      const intent = j.ledger.intend(a.lease, effect(a.run.jobId));
      expect(await answered(intent)).toBe(false);
      expect(held.waiting).toHaveLength(1);
      held.release();
      expect((await intent).state).toBe("intended");
      // A settle of a probed effect and the run's completion: answered with no fsync of their own.
      await j.ledger.settle(a.lease, `${a.run.jobId}:0`, "applied", { sha: "x" }, { soon: true });
      await j.runs.complete(a.lease, { soon: true });
      expect(j.fsyncs).toBe(fsyncs + 1);
      expect(held.waiting).toHaveLength(0);
      // Committed: another process reads them at once.
      const reader = await openSqliteJournal(join(dir, "j.db"), { readonly: true });
      expect((await reader.runs.latest(a.run.jobId))?.state).toBe("done");
      await reader.close();
      // The next run's intent: one fsync, which carries the two before it (the WAL is in order).
      const b = await j.runs.claim(CLAIM);
      if (!b) throw new Error("no claim");
      const next = j.ledger.intend(b.lease, effect(b.run.jobId));
      expect(await answered(next)).toBe(false);
      held.release();
      await next;
      expect(j.fsyncs).toBe(fsyncs + 2);
      // Nothing soon was left behind: no fsync of its own follows.
      await sleep(SOON_MS * 2);
      expect(j.fsyncs).toBe(fsyncs + 2);
    } finally {
      held.release();
      await j.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives a soon write that no durable write follows an fsync of its own within SOON_MS, and one on close", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-soon-"));
    const held = heldFsync();
    const j = await openSqliteJournal(join(dir, "j.db"), { fdatasync: held.fdatasync });
    try {
      for (const id of ["a", "b"]) await recorded(j, id, held);
      const a = await j.runs.claim(CLAIM);
      if (!a) throw new Error("no claim");
      await j.runs.complete(a.lease, { soon: true });
      expect(held.waiting).toHaveLength(0);
      await sleep(SOON_MS * 2);
      await until(() => held.waiting.length > 0);
      expect(held.waiting).toHaveLength(1);
      held.release();
      await until(() => held.done() >= 3);
      expect(held.done()).toBeGreaterThanOrEqual(3);
      // A soon write just before a clean close: close fsyncs it.
      const b = await j.runs.claim(CLAIM);
      if (!b) throw new Error("no claim");
      await j.runs.complete(b.lease, { soon: true });
      const before = held.done();
      const closing = j.close();
      await until(() => held.waiting.length > 0);
      held.release();
      await closing;
      expect(held.done()).toBe(before + 1);
    } finally {
      held.release();
      await j.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Records output `id` (no effects), letting its fsync run. */
async function recorded(
  j: Awaited<ReturnType<typeof openSqliteJournal>>,
  id: string,
  held: ReturnType<typeof heldFsync>,
): Promise<void> {
  const r = j.outputs.record(output(id), { source: "cli", targets: [] });
  await until(() => held.waiting.length > 0);
  held.release();
  await r;
}
