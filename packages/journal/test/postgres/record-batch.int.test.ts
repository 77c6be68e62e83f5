import { type AgentOutput, canonicalJson, isIdemError, sha256Hex } from "@idem/schema";
import { ignoreServerShutdown, type PostgresHandle, startPostgres } from "@idem/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordResult } from "../../src/port/outputs.js";
import { lockKey } from "../../src/store/postgres/outputs.js";
import { PostgresJournalStore } from "../../src/store/postgres/postgres-journal-store.js";

const TARGETS = ["file:a", "file:b", "file:c", "file:d"];
const out = (jobId: string, content = jobId): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [{ kind: "file.write", root: "shared", path: `${jobId}.txt`, content }],
});
const hashOf = (o: AgentOutput) => sha256Hex(canonicalJson(o));

/** A raw client of the test's own, its teardown's shutdown notice let through. */
async function rawClient(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on("error", ignoreServerShutdown);
  await c.connect();
  return c;
}

/** The targets of job `i`: one of four, every fifth job on two of them. */
const targetsOf = (i: number): string[] => {
  const at = (k: number) => TARGETS[k % TARGETS.length] as string;
  return i % 5 === 0 ? [at(i), at(i + 1)] : [at(i)];
};

/** Lets a record just called start its statement: records called after it wait for it. */
const inFlight = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The PID of a backend waiting for an advisory lock; polls until there is one (no timing). */
async function waitingBackend(observer: pg.Client): Promise<number> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const { rows } = await observer.query<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted LIMIT 1",
    );
    if (rows[0] !== undefined) return rows[0].pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("no backend waited for an advisory lock within 60 s");
}

describe("PostgreSQL group commit of records", () => {
  let server: PostgresHandle;
  let n = 0;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function setup() {
    const url = await server.createDatabase(`record_batch_${++n}`);
    const j = await PostgresJournalStore.open(url, { max: 4 });
    const raw = await rawClient(url);
    return {
      url,
      j,
      raw,
      close: async () => {
        await raw.end();
        await j.close();
      },
    };
  }

  /**
   * A batch held by a lock: `locker` (a client of the test's own) holds file:held's lock; the first
   * record (another target) goes alone, the next five wait for it and go in one batch, which waits
   * for file:held's lock. Returns once that batch's backend waits, with its PID.
   */
  async function heldBatch(url: string, j: PostgresJournalStore, raw: pg.Client) {
    const locker = await rawClient(url);
    await locker.query("BEGIN");
    await locker.query("SELECT pg_advisory_xact_lock($1, hashtext('file:held'))", [lockKey.target]);
    const first = j.outputs.record(out("first"), { source: "executor", targets: ["file:free"] });
    await inFlight();
    const batch = Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        j.outputs.record(out(`held-${i}`), { source: "executor", targets: ["file:held"] }),
      ),
    );
    expect((await first).status).toBe("recorded");
    return { locker, batch, pid: await waitingBackend(raw) };
  }

  it("answers 200 racing records each as alone, in a few shared commits, run ids following seq per target", async () => {
    const { j, raw, close } = await setup();
    try {
      // 150 jobs; 25 of them recorded twice with the same output, 25 twice with another one, each
      // pair called back to back so that the second waits for the first's statement.
      const calls: {
        jobId: string;
        output: AgentOutput;
        kind: "first" | "duplicate" | "conflict";
      }[] = [];
      for (let i = 0; i < 150; i++) {
        const jobId = `job-${String(i).padStart(3, "0")}`;
        calls.push({ jobId, output: out(jobId), kind: "first" });
        if (i % 6 === 1) calls.push({ jobId, output: out(jobId), kind: "duplicate" });
        if (i % 6 === 4) calls.push({ jobId, output: out(jobId, "other"), kind: "conflict" });
      }
      expect(calls).toHaveLength(200);
      const settled = await Promise.allSettled(
        calls.map((call) =>
          j.outputs.record(call.output, {
            source: "executor",
            targets: targetsOf(Number(call.jobId.slice(4))),
          }),
        ),
      );
      const results = settled.map((s) => {
        if (s.status === "rejected") throw s.reason;
        return s.value;
      });

      const { rows: outputs } = await raw.query<{ job_id: string; seq: string; xmin: string }>(
        "SELECT job_id, seq, xmin::text FROM outputs ORDER BY seq",
      );
      expect(outputs).toHaveLength(150);
      const seqOf = new Map(outputs.map((o) => [o.job_id, Number(o.seq)]));
      calls.forEach((call, i) => {
        const r = results[i] as RecordResult;
        const hash = hashOf(call.output);
        if (call.kind === "first") {
          expect(r).toEqual({
            status: "recorded",
            jobId: call.jobId,
            seq: seqOf.get(call.jobId),
            contentHash: hash,
          });
        } else if (call.kind === "duplicate") {
          expect(r).toEqual({
            status: "duplicate",
            jobId: call.jobId,
            seq: seqOf.get(call.jobId),
            contentHash: hash,
          });
        } else {
          expect(r).toEqual({
            status: "conflict",
            jobId: call.jobId,
            contentHash: hash,
            existingHash: hashOf(out(call.jobId)),
          });
        }
      });
      // Outputs took their seqs in call order.
      expect(outputs.map((o) => o.job_id)).toEqual(
        calls.filter((c) => c.kind === "first").map((c) => c.jobId),
      );

      const { rows: events } = await raw.query<{ type: string; n: string }>(
        "SELECT type, count(*) AS n FROM events GROUP BY type ORDER BY type",
      );
      expect(Object.fromEntries(events.map((e) => [e.type, Number(e.n)]))).toEqual({
        "output.conflict": 25,
        "output.duplicate": 25,
        "output.recorded": 150,
      });
      const { rows: recorded } = await raw.query<{ job_id: string; data: string }>(
        "SELECT job_id, data FROM events WHERE type = 'output.recorded'",
      );
      for (const e of recorded) {
        expect(JSON.parse(e.data)).toEqual({
          source: "executor",
          seq: seqOf.get(e.job_id),
          contentHash: hashOf(out(e.job_id)),
        });
      }
      const rejections = await j.outputs.rejections();
      expect(rejections.map((r) => r.jobId).sort()).toEqual(
        calls.filter((c) => c.kind === "conflict").map((c) => c.jobId),
      );

      // Each output's run was written by the same transaction, and run ids follow output seq on
      // every target.
      const { rows: runs } = await raw.query<{
        id: string;
        seq: string;
        targets: string;
        same_tx: boolean;
      }>(
        `SELECT r.id, o.seq, r.targets, r.xmin = o.xmin AS same_tx
         FROM runs r JOIN outputs o ON o.job_id = r.job_id ORDER BY o.seq`,
      );
      expect(runs).toHaveLength(150);
      expect(runs.every((r) => r.same_tx)).toBe(true);
      for (const target of TARGETS) {
        const ids = runs
          .filter((r) => (JSON.parse(r.targets) as string[]).includes(target))
          .map((r) => Number(r.id));
        expect(ids.length).toBeGreaterThan(0);
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
      }
      const { rows: active } = await raw.query<{ n: string }>(
        "SELECT count(*) AS n FROM active_targets",
      );
      expect(Number(active[0]?.n)).toBe(runs.reduce((k, r) => k + JSON.parse(r.targets).length, 0));

      // Batches happened: the 150 outputs were written by far fewer transactions than outputs
      // (one at a time, it would be 150).
      const commits = new Set(outputs.map((o) => o.xmin)).size;
      expect(commits).toBeLessThan(30);
    } finally {
      await close();
    }
  });

  it("a record the server refuses in a batch fails its own caller only", async () => {
    const { j, raw, close } = await setup();
    try {
      const options = { source: "executor", targets: ["file:a"] };
      // The first goes alone; the next ten wait for it and go in one batch, which the server refuses
      // as a whole (a NUL character is no text PostgreSQL stores), then each alone.
      const first = j.outputs.record(out("first"), options);
      await inFlight();
      const rest = Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          j.outputs.record(
            out(`rest-${i}`),
            i === 4 ? { ...options, traceparent: "00-\u0000-bad" } : options,
          ),
        ),
      );
      expect((await first).status).toBe("recorded");
      const settled = await rest;
      expect(settled).toHaveLength(10);
      settled.forEach((s, i) => {
        if (i === 4) {
          expect(s.status).toBe("rejected");
          const reason = (s as PromiseRejectedResult).reason;
          expect(isIdemError(reason, "UNAVAILABLE")).toBe(false);
          expect((reason as { code?: string }).code).toBe("22021");
        } else {
          expect(s).toMatchObject({ status: "fulfilled", value: { status: "recorded" } });
        }
      });
      const { rows } = await raw.query<{ job_id: string }>(
        "SELECT job_id FROM outputs ORDER BY seq",
      );
      expect(rows.map((r) => r.job_id).sort()).toEqual(
        [
          "first",
          ...Array.from({ length: 10 }, (_, i) => `rest-${i}`).filter((id) => id !== "rest-4"),
        ].sort(),
      );
      expect(await j.outputs.has("rest-4")).toBe(false);
    } finally {
      await close();
    }
  });

  it("fails every record of a batch whose server session is gone with UNAVAILABLE, none written", async () => {
    const { url, j, raw, close } = await setup();
    const { locker, batch, pid } = await heldBatch(url, j, raw);
    try {
      // Its session ends under it (57P01, as when the server shuts down): the batch is UNAVAILABLE.
      await raw.query("SELECT pg_terminate_backend($1)", [pid]);
      await locker.query("ROLLBACK");
      const settled = await batch;
      expect(settled).toHaveLength(5);
      for (const s of settled) {
        expect(s.status).toBe("rejected");
        expect(isIdemError((s as PromiseRejectedResult).reason, "UNAVAILABLE")).toBe(true);
      }
      const { rows } = await raw.query<{ job_id: string }>("SELECT job_id FROM outputs");
      expect(rows.map((r) => r.job_id)).toEqual(["first"]);
      // The callers' retry writes them.
      for (let i = 0; i < 5; i++) {
        expect(
          (await j.outputs.record(out(`held-${i}`), { source: "executor", targets: ["file:held"] }))
            .status,
        ).toBe("recorded");
      }
    } finally {
      await locker.end();
      await close();
    }
  });

  it("sends each record of a batch whose statement was cancelled again alone, so all are written", async () => {
    const { url, j, raw, close } = await setup();
    const { locker, batch, pid } = await heldBatch(url, j, raw);
    try {
      // Cancelled (57014): not the server gone, so not UNAVAILABLE; alone, each goes through.
      await raw.query("SELECT pg_cancel_backend($1)", [pid]);
      await waitingBackend(raw);
      await locker.query("ROLLBACK");
      const settled = await batch;
      expect(settled.map((s) => s.status === "fulfilled" && s.value.status)).toEqual(
        Array(5).fill("recorded"),
      );
      const { rows } = await raw.query<{ job_id: string; xmin: string }>(
        "SELECT job_id, xmin::text FROM outputs WHERE job_id LIKE 'held-%'",
      );
      // Alone: a transaction each.
      expect(new Set(rows.map((r) => r.xmin)).size).toBe(5);
    } finally {
      await locker.end();
      await close();
    }
  });
});
