import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { effectTargetsOf } from "@idem/effects";
import { createOwnerId, formatOwnerId, parseOwnerId, processStartTime } from "@idem/runtime";
import { type AgentOutput, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { afterEach, describe, expect, it } from "vitest";
import { leaseHoldersPastTime } from "../src/status/stuck-holders.js";

const config = (() => {
  const r = parseConfig(
    {
      roots: Object.fromEntries(["a", "b", "c"].map((r) => [r, { path: `/tmp/idem-stuck-${r}` }])),
    },
    { dir: "/tmp" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
})();
const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  // One root each: runs on one target are claimed one at a time.
  effects: [{ kind: "file.write", root: jobId, path: "x.txt", content: jobId }],
});

/** The owner ID a process `pid` of this host would have written (as createOwnerId makes it). */
function ownerOf(pid: number): string {
  const self = parseOwnerId(createOwnerId());
  if (!self) throw new Error("no /proc: owner IDs carry no process identity here");
  return formatOwnerId({ ...self, pid, startTime: processStartTime(pid) ?? "0" });
}

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const c of children.splice(0)) {
    c.kill("SIGCONT");
    c.kill("SIGKILL");
  }
});
const sleeper = () => {
  const c = spawn("sleep", ["600"], { stdio: "ignore" });
  children.push(c);
  return c;
};

describe("leaseHoldersPastTime", () => {
  it("names a frozen holder within its lease, a lease run out with nobody taking over, and never a live holder within its lease", async () => {
    await using t = await tempJournal();
    const j = t.journal;
    for (const id of ["a", "b", "c"])
      await j.outputs.record(out(id), { source: "cli", targets: effectTargetsOf(out(id), config) });
    const frozen = sleeper();
    const live = sleeper();
    frozen.kill("SIGSTOP");
    const long = { leaseMs: 600_000, maxLeaseExpiries: 5 };
    expect(await j.runs.claim({ owner: ownerOf(frozen.pid as number), ...long })).toBeDefined();
    expect(await j.runs.claim({ owner: ownerOf(live.pid as number), ...long })).toBeDefined();
    // A process that is gone, whose short lease ran out with no interpreter to take it over.
    const gone = spawn("true");
    await new Promise((r) => gone.once("exit", r));
    const short = { leaseMs: 1, maxLeaseExpiries: 5 };
    expect(await j.runs.claim({ owner: ownerOf(gone.pid as number), ...short })).toBeDefined();
    await j.jobs.enqueue({ jobId: "q", agent: "writer", input: {} });
    await j.jobs.claimNext({ owner: ownerOf(frozen.pid as number), leaseMs: 600_000 });

    // Stopped is read from /proc: wait for the signal to land.
    for (let i = 0; i < 200; i++) {
      const held = await leaseHoldersPastTime(j, Date.now() + 2_000);
      if (held.some((h) => h.state === "stopped")) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const held = await leaseHoldersPastTime(j, Date.now() + 2_000);
    const seen = held.map((h) => [h.key, h.pid, h.state, h.holds]);
    expect(seen).toContainEqual(["runs", frozen.pid, "stopped", "1 run lease (first: a)"]);
    expect(seen).toContainEqual(["runs", gone.pid, "gone", "1 run lease (first: c)"]);
    expect(seen).toContainEqual(["jobs", frozen.pid, "stopped", "1 job delivery lease (first: q)"]);
    expect(held.map((h) => h.pid)).not.toContain(live.pid);
    expect(held.every((h) => h.host === hostname())).toBe(true);
    const frozenRun = held.find((h) => h.key === "runs" && h.pid === frozen.pid);
    expect(frozenRun?.fix).toContain(`kill -9 ${frozen.pid}`);
    const goneRun = held.find((h) => h.pid === gone.pid);
    expect(goneRun?.since).not.toBeNull();
    expect(goneRun?.fix).toContain("idem interpreter");
  });
});
