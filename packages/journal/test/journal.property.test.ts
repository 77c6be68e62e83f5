import { contentHash, isIdemError } from "@idem/schema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Lease } from "../src/index.js";
import { output, tempJournal } from "./helpers.js";

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

describe("SqliteJournalStore under any interleaving", () => {
  it("keeps one output per job (first write wins) and never lets two holders write one run", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), async (ops) => {
        await using t = await tempJournal();
        const j = t.journal;
        const first = new Map<string, string>(); // jobId -> content hash of the first submission
        const current = new Map<number, string>(); // runId -> token the model says holds it
        const leases: Lease[] = [];
        for (const op of ops) {
          switch (op.t) {
            case "submit": {
              const o = output(`job-${op.job}`, `content-${op.content}`);
              const r = await j.outputs.record(o, {
                source: "prop",
                targets: [`root:${op.job % 2}`],
              });
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
                const prev = current.get(c.lease.runId);
                if (prev !== undefined) expect(c.takeover).toBe(true);
                current.set(c.lease.runId, c.lease.token);
                leases.push(c.lease);
              }
              break;
            }
            case "advance":
              t.clock.advance(op.ms);
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
                    nextAt: t.clock.now() + 100,
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
        const rows = j.database.prepare("SELECT job_id, content_hash FROM outputs").all() as {
          job_id: string;
          content_hash: string;
        }[];
        expect(new Map(rows.map((r) => [r.job_id, r.content_hash]))).toEqual(first);
        // Every running run is held by exactly the token the model gave it.
        const running = j.database
          .prepare("SELECT id, lease_token FROM runs WHERE state = 'running'")
          .all() as {
          id: number;
          lease_token: string;
        }[];
        for (const r of running) expect(current.get(r.id)).toBe(r.lease_token);
        expect(await j.maintenance.integrity()).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});
