import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ReplaySelection } from "@idem/journal";
import type { EffectSpec } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { buildAudit, isAuditClean } from "../src/audit/audit-report.js";
import { createReplayRuns } from "../src/replay/create-replay-runs.js";
import { buildReplayPlan } from "../src/replay/replay-plan.js";
import { commitSpec, gitIn, initRepo, type OpsFixture, opsFixture } from "./ops-fixture.js";

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

function plan(f: OpsFixture, selection: ReplaySelection) {
  return buildReplayPlan({
    journal: f.journal,
    effects: f.effects,
    selection,
    forceUnprobeable: false,
  });
}

/** Plans, creates the generations and drives them to done, as `idem replay --yes --now` does. */
async function replayNow(f: OpsFixture, selection: ReplaySelection): Promise<void> {
  await createReplayRuns(f.journal, await plan(f, selection), { actor: "test" });
  await f.interpret();
}

/** `n` patches, each appending a line to chain.txt with the previous lines as context. */
function chainPatches(n: number): string[] {
  const dir = mkdtempSync(join(tmpdir(), "idem-chain-"));
  try {
    initRepo(dir);
    let content = "line 0\n";
    writeFileSync(join(dir, "chain.txt"), content);
    gitIn(dir, "add", "chain.txt");
    gitIn(dir, "commit", "-q", "-m", "chain");
    const patches: string[] = [];
    for (let i = 1; i <= n; i++) {
      content += `line ${i}\n`;
      writeFileSync(join(dir, "chain.txt"), content);
      patches.push(gitIn(dir, "diff"));
      gitIn(dir, "commit", "-q", "-am", `line ${i}`);
    }
    return patches;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("buildReplayPlan and createReplayRuns", () => {
  it("plans a chain of 20 dependent patches with the last 8 lost as apply 8 / skip 12, and restores the exact tree", async () => {
    fx = await opsFixture();
    writeFileSync(join(fx.repoDir, "chain.txt"), "line 0\n");
    gitIn(fx.repoDir, "add", "chain.txt");
    gitIn(fx.repoDir, "commit", "-q", "-m", "chain");
    for (const [i, patch] of chainPatches(20).entries()) {
      const spec: EffectSpec = { kind: "git.patch", repo: "site", message: `line ${i + 1}`, patch };
      await fx.record(`patch-${String(i + 1).padStart(2, "0")}`, [spec]);
    }
    expect(await fx.interpret()).toBe(20);
    const tree = gitIn(fx.repoDir, "rev-parse", "main^{tree}").trim();
    gitIn(fx.repoDir, "reset", "-q", "--hard", "HEAD~8");

    const p = await plan(fx, { all: true });
    expect(p.summary).toEqual({ apply: 8, skip: 12, conflict: 0, uncertain: 0 });
    expect(p.plan.filter((e) => e.action === "apply").map((e) => e.jobId)).toEqual(
      Array.from({ length: 8 }, (_, i) => `patch-${13 + i}`),
    );

    await replayNow(fx, { all: true });
    expect(gitIn(fx.repoDir, "rev-parse", "main^{tree}").trim()).toBe(tree);
    expect(isAuditClean(await buildAudit(fx.config, fx.journal, fx.effects))).toBe(true);
  });

  it("after an incident losing 20 of 50 effects plans exactly those 20, then restores each key once", async () => {
    fx = await opsFixture();
    for (let i = 0; i < 50; i++) {
      await fx.record(`job-${String(i).padStart(2, "0")}`, [commitSpec(`f/${i}.txt`, `${i}\n`)]);
    }
    expect(await fx.interpret()).toBe(50);
    gitIn(fx.repoDir, "reset", "-q", "--hard", "HEAD~20");

    const p = await plan(fx, { all: true });
    const lost = Array.from({ length: 20 }, (_, i) => `job-${30 + i}/0`);
    expect(p.plan.filter((e) => e.action === "apply").map((e) => e.key)).toEqual(lost);
    expect(p.summary).toEqual({ apply: 20, skip: 30, conflict: 0, uncertain: 0 });

    await replayNow(fx, { all: true });
    const log = gitIn(fx.repoDir, "log", "--format=%B", "main");
    for (let i = 0; i < 50; i++) {
      const key = `job-${String(i).padStart(2, "0")}/0`;
      expect(log.split("\n").filter((l) => l === `Idem-Effect: ${key}`)).toHaveLength(1);
    }
    const audit = await buildAudit(fx.config, fx.journal, fx.effects);
    expect(audit).toMatchObject({ duplicates: [], drift: [] });

    const again = await plan(fx, { all: true });
    expect(again.summary).toEqual({ apply: 0, skip: 50, conflict: 0, uncertain: 0 });
  });

  it("never rolls back a file written by job A and later by job B", async () => {
    fx = await opsFixture();
    const write = (content: string): EffectSpec => ({
      kind: "file.write",
      root: "outbox",
      path: "report.md",
      content,
    });
    await fx.record("job-a", [write("A\n")]);
    await fx.record("job-b", [write("B\n")]);
    await fx.interpret();
    const file = join(fx.rootDir, "report.md");
    writeFileSync(file, "lost in an incident\n");

    const p = await plan(fx, { jobIds: ["job-a", "job-b"] });
    expect(p.plan.map((e) => [e.key, e.action])).toEqual([
      ["job-a/0", "skip"],
      ["job-b/0", "apply"],
    ]);
    expect(p.plan[0]?.reason).toContain("superseded");
    expect(readFileSync(file, "utf8")).toBe("lost in an incident\n");

    await replayNow(fx, { jobIds: ["job-a", "job-b"] });
    expect(readFileSync(file, "utf8")).toBe("B\n");
    const onlyA = await plan(fx, { jobIds: ["job-a"] });
    expect(onlyA.plan.map((e) => e.action)).toEqual(["skip"]);
  });

  it("leaves an output whose run is still active out of the replay, as busy", async () => {
    fx = await opsFixture();
    await fx.record("job-1", [commitSpec("a.txt", "a\n")]);
    await fx.record("job-2", [commitSpec("b.txt", "b\n")]);
    await fx.interpret();
    await createReplayRuns(fx.journal, { jobIds: ["job-1"] }, { actor: "test" });
    const p = await plan(fx, { all: true });
    expect(p.busy).toEqual(["job-1"]);
    expect(p.jobIds).toEqual(["job-2"]);
    expect(p.plan.map((e) => [e.key, e.generation])).toEqual([["job-2/0", 2]]);
  });
});
