import { type AgentOutput, ManualClock } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createDeadHolderSweep, endLeasesIfDead } from "../src/index.js";

const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [{ kind: "file.write", root: "out", path: `${jobId}.txt`, content: jobId }],
});
const claimAs = (owner: string) => ({ owner, leaseMs: 600_000, maxLeaseExpiries: 5 });

describe("createDeadHolderSweep", () => {
  it("ends the leases of dead holders only, never its own, at most once per everyMs", async () => {
    await using t = await tempJournal();
    const { journal } = t;
    for (const id of ["a", "b", "c"]) {
      await journal.outputs.record(out(id), { source: "cli", targets: [`root:${id}`] });
    }
    await journal.runs.claim(claimAs("dead-1"));
    await journal.runs.claim(claimAs("self"));
    await journal.runs.claim(claimAs("alive"));
    const clock = new ManualClock();
    const asked: string[] = [];
    const sweep = createDeadHolderSweep({
      holders: journal.runs,
      clock,
      self: "self",
      everyMs: 500,
      isDead: (o) => {
        asked.push(o);
        return o.startsWith("dead") || o === "self";
      },
    });
    expect(await sweep.sweep()).toEqual({ owners: ["dead-1"], expired: 1 });
    expect(asked.sort()).toEqual(["alive", "dead-1"]);
    clock.advance(499);
    expect(await sweep.sweep()).toBeUndefined();
    clock.advance(1);
    expect(await sweep.sweep()).toEqual({ owners: ["dead-1"], expired: 0 });
    const taken = await journal.runs.claim(claimAs("next"));
    expect([taken?.output.jobId, taken?.takeover]).toEqual(["a", true]);
    clock.advance(500);
    expect(await sweep.sweep()).toEqual({ owners: [], expired: 0 });
  });
});

describe("endLeasesIfDead", () => {
  it("ends a dead holder's leases, and never those of a live holder, its own owner or none", async () => {
    await using t = await tempJournal();
    const { journal } = t;
    for (const id of ["a", "b"]) {
      await journal.outputs.record(out(id), { source: "cli", targets: [`root:${id}`] });
    }
    await journal.runs.claim(claimAs("dead-1"));
    await journal.runs.claim(claimAs("alive"));
    const isDead = (o: string) => o.startsWith("dead") || o === "self-dead";
    const options = { self: "self-dead", isDead };
    expect(await endLeasesIfDead(journal.runs, "alive", options)).toBe(false);
    expect(await endLeasesIfDead(journal.runs, "self-dead", options)).toBe(false);
    expect(await endLeasesIfDead(journal.runs, null, options)).toBe(false);
    expect(await journal.runs.claim(claimAs("next"))).toBeUndefined();
    expect(await endLeasesIfDead(journal.runs, "dead-1", options)).toBe(true);
    const taken = await journal.runs.claim(claimAs("next"));
    expect([taken?.output.jobId, taken?.takeover]).toEqual(["a", true]);
  });
});
