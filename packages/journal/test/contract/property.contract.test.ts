import { contentHash, isIdemError, ManualClock } from "@idem/schema";
import { ignoreServerShutdown } from "@idem/testing";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalStore, Lease, SqliteJournalStore } from "../../src/index.js";
import { output } from "../helpers.js";
import { type FullStore, full } from "./full-store.js";
import { STORES, type StoreFactory } from "./stores.js";

type Op =
  | { t: "submit"; job: number; content: number }
  | { t: "claim"; owner: number }
  | { t: "advance"; ms: number }
  | { t: "complete" | "fail" | "extend" | "intend" | "release"; lease: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant("submit" as const), job: fc.nat(5), content: fc.nat(2) }),
  fc.record({ t: fc.constant("claim" as const), owner: fc.nat(2) }),
  fc.record({ t: fc.constant("advance" as const), ms: fc.constantFrom(10, 600, 1200) }),
  fc.record({
    t: fc.constantFrom(
      "complete" as const,
      "fail" as const,
      "extend" as const,
      "intend" as const,
      "release" as const,
    ),
    lease: fc.nat(20),
  }),
);

/** A journal under test: the store, its host clock, time moved on, and raw reads of its rows. */
interface Subject {
  j: FullStore & Pick<JournalStore, "maintenance">;
  clock: ManualClock;
  /** Moves time on by `ms` as the store's leases and due times see it. */
  advance(ms: number): Promise<void>;
  outputs(): Promise<{ job_id: string; content_hash: string }[]>;
  running(): Promise<{ id: number; lease_token: string }[]>;
  close(): Promise<void>;
}

/**
 * Time for each store. SQLite judges leases and due times by the injected clock: advancing it is
 * the time passing. PostgreSQL judges them by its server's now(), which no test clock moves: the
 * same passing of time is every server-clock column of the runs (lease_until, due_at, next_at)
 * moved back by `ms`, which is what a now() later by `ms` compares them with. Real time passing
 * on PostgreSQL as well changes which claims find a run, never what the model expects of them
 * (a lease is lost only to a takeover, which the model follows).
 */
async function subject(factory: StoreFactory): Promise<Subject> {
  const clock = new ManualClock();
  let n = 0;
  const j = full(await factory.open({ clock, ids: () => `token-${++n}` })) as Subject["j"];
  if (factory.name === "sqlite") {
    const db = (j as unknown as SqliteJournalStore).database;
    return {
      j,
      clock,
      advance: async (ms) => clock.advance(ms),
      outputs: async () =>
        db.prepare("SELECT job_id, content_hash FROM outputs").all() as {
          job_id: string;
          content_hash: string;
        }[],
      running: async () =>
        db.prepare("SELECT id, lease_token FROM runs WHERE state = 'running'").all() as {
          id: number;
          lease_token: string;
        }[],
      close: () => j.close(),
    };
  }
  const raw = new pg.Client({ connectionString: j.location });
  raw.on("error", ignoreServerShutdown);
  await raw.connect();
  return {
    j,
    clock,
    advance: async (ms) => {
      clock.advance(ms);
      await raw.query(
        "UPDATE runs SET lease_until = lease_until - $1, due_at = due_at - $1, next_at = next_at - $1",
        [ms],
      );
    },
    outputs: async () => (await raw.query("SELECT job_id, content_hash FROM outputs")).rows,
    running: async () =>
      (await raw.query("SELECT id, lease_token FROM runs WHERE state = 'running'")).rows.map(
        (r: { id: string; lease_token: string }) => ({
          id: Number(r.id),
          lease_token: r.lease_token,
        }),
      ),
    close: async () => {
      await raw.end();
      await j.close();
    },
  };
}

/** Runs `ops` against a fresh journal and checks each answer and the end state against a model. */
async function holdsUnder(factory: StoreFactory, ops: Op[]): Promise<void> {
  const s = await subject(factory);
  const { j, clock } = s;
  try {
    const first = new Map<string, string>(); // jobId -> content hash of the first submission
    const current = new Map<number, string>(); // runId -> token the model says holds it
    const leases: Lease[] = [];
    for (const op of ops) {
      switch (op.t) {
        case "submit": {
          const o = output(`job-${op.job}`, `content-${op.content}`);
          const r = await j.outputs.record(o, { source: "prop", targets: [`root:${op.job % 2}`] });
          const h = contentHash(o);
          const expected = !first.has(o.jobId)
            ? "recorded"
            : first.get(o.jobId) === h
              ? "duplicate"
              : "conflict";
          expect(r.status).toBe(expected);
          if (!first.has(o.jobId)) first.set(o.jobId, h);
          break;
        }
        case "claim": {
          const c = await j.runs.claim({
            owner: `o${op.owner}`,
            leaseMs: 1000,
            maxLeaseExpiries: 100,
          });
          if (c) {
            // Nobody else may hold a live lease on it: either it was free, or the previous lease expired.
            if (current.get(c.lease.runId) !== undefined) expect(c.takeover).toBe(true);
            current.set(c.lease.runId, c.lease.token);
            leases.push(c.lease);
          }
          break;
        }
        case "advance":
          await s.advance(op.ms);
          break;
        default: {
          const lease = leases[op.lease % Math.max(1, leases.length)];
          if (!lease) break;
          const isCurrent = current.get(lease.runId) === lease.token;
          let ok = true;
          try {
            if (op.t === "complete") await j.runs.complete(lease);
            else if (op.t === "fail")
              await j.runs.fail(lease, {
                class: "transient",
                error: "x",
                nextAt: clock.now() + 100,
              });
            else if (op.t === "extend") await j.runs.extendLease(lease, 1000);
            else if (op.t === "release") await j.runs.release(lease);
            else
              await j.ledger.intend(lease, {
                key: `${lease.jobId}/0`,
                idx: 0,
                kind: "git.commit",
                specHash: "h",
              });
          } catch (e) {
            if (op.t === "complete" && isIdemError(e, "INVALID_STATE")) {
              // An effect of this generation is not settled: refused, and the holder keeps its lease.
              expect(isCurrent).toBe(true);
              break;
            }
            if (!isIdemError(e, "LEASE_LOST")) throw e;
            ok = false;
          }
          expect(ok).toBe(isCurrent);
          if (ok && (op.t === "complete" || op.t === "fail" || op.t === "release"))
            current.delete(lease.runId);
        }
      }
    }
    // One output per job, holding the first submission's content.
    const rows = await s.outputs();
    expect(new Map(rows.map((r) => [r.job_id, r.content_hash]))).toEqual(first);
    // Every running run is held by exactly the token the model gave it.
    for (const r of await s.running()) expect(current.get(r.id)).toBe(r.lease_token);
    expect(await j.maintenance.integrity()).toEqual([]);
  } finally {
    await s.close();
  }
}

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal on %s under any interleaving",
  (_name, make) => {
    let factory: StoreFactory;
    beforeAll(() => {
      factory = make();
    });
    afterAll(async () => {
      await factory.teardown();
    });

    it("keeps one output per job (first write wins) and never lets two holders write one run", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), (ops) =>
          holdsUnder(factory, ops),
        ),
        { numRuns: 60 },
      );
    });
  },
);
