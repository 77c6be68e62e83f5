import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GitCommitSpec } from "@idem/effects";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { GIT_DURABLE_DEFAULT } from "../src/create-effects.js";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, clock, type Sandbox, sandbox } from "./helpers.js";

// git's trace2 reports how many fsyncs a git process made ("fsync/hardware-flush"). Every git
// child idem starts in this file writes its trace here (set before idem builds its git
// environment), so the test sees whether the ref moves of an apply were fsynced.
const traces = mkdtempSync(join(tmpdir(), "idem-trace2-"));
process.env.GIT_TRACE2_EVENT = traces;

/** The fsyncs of the `git update-ref --stdin` processes that traced into `traces` since `seen`. */
function updateRefFsyncs(seen: Set<string>): number[] {
  const counts: number[] = [];
  for (const f of readdirSync(traces)) {
    if (seen.has(f)) continue;
    const events = readFileSync(join(traces, f), "utf8")
      .split("\n")
      .filter((l) => l.endsWith("}"))
      .map(
        (l) => JSON.parse(l) as { event: string; argv?: string[]; key?: string; value?: string },
      );
    // The fsync counts are written as the process exits: read a trace once it is complete.
    if (!events.some((e) => e.event === "atexit")) continue;
    seen.add(f);
    const argv = events.find((e) => e.event === "start")?.argv ?? [];
    if (!argv.includes("update-ref") || !argv.includes("--stdin")) continue;
    const flush = events.find((e) => e.key === "fsync/hardware-flush");
    counts.push(Number(flush?.value ?? 0));
  }
  return counts;
}

const spec = (i: number): GitCommitSpec => ({
  kind: "git.commit",
  repo: "site",
  message: `write f${i}`,
  files: [{ path: `f${i}.txt`, content: `${i}\n` }],
});

async function applyTwo(fx: Effects): Promise<void> {
  for (const i of [1, 2]) {
    const key = `job-${i}/0`;
    await fx.apply(spec(i), key, { probed: await fx.probe(spec(i), key) });
  }
  // Closing ends the long-lived update-ref, which writes its trace as it exits.
  await fx.close();
}

async function waitForUpdateRef(seen: Set<string>): Promise<number[]> {
  for (let i = 0; i < 1200; i++) {
    const got = updateRefFsyncs(seen);
    if (got.length > 0) return got;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("no trace of git update-ref --stdin");
}

describe("git effects durability", () => {
  let sb: Sandbox;
  afterEach(() => sb?.cleanup());
  afterAll(() => rmSync(traces, { recursive: true, force: true }));

  it("is on by default: the refs an apply moves are fsynced by git before apply returns", async () => {
    expect(GIT_DURABLE_DEFAULT).toBe(true);
    sb = sandbox();
    addRepo(sb);
    const seen = new Set(readdirSync(traces));
    await applyTwo(createEffects(sb.config, { clock: clock() }));
    const fsyncs = await waitForUpdateRef(seen);
    // Two transactions of at least the branch, the key ref and the watermark each.
    expect(fsyncs.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(6);
  });

  it("durable: false leaves the refs to the page cache, as git does by default", async () => {
    sb = sandbox();
    addRepo(sb);
    const seen = new Set(readdirSync(traces));
    await applyTwo(createEffects(sb.config, { clock: clock(), durable: false }));
    const fsyncs = await waitForUpdateRef(seen);
    expect(fsyncs.reduce((a, b) => a + b, 0)).toBe(0);
  });
});
