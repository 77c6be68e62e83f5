import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EffectSpec } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { commitSpec, type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem, initRepo } from "./ops-helpers.js";

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

interface Plan {
  plan: { key: string; jobId: string; kind: string; action: string; reason: string }[];
  summary: { apply: number; skip: number; conflict: number; uncertain: number };
}

async function dryRun(f: OpsFixture, ...selection: string[]): Promise<Plan> {
  const r = await idem(["replay", ...selection, "--dry-run", "--json", "--config", f.ws.config]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Plan;
}

/** The journal's files, byte for byte. */
function journalBytes(path: string): Buffer[] {
  return [path, `${path}-wal`].map((p) => (existsSync(p) ? readFileSync(p) : Buffer.alloc(0)));
}

/** 20 patches, each appending a line to chain.txt with the previous lines as context. */
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

describe("idem replay", () => {
  it("plans a chain of 20 dependent patches with the last 8 lost as apply 8 / skip 12, and restores the exact tree", async () => {
    fx = await opsFixture();
    writeFileSync(join(fx.repoDir, "chain.txt"), "line 0\n");
    gitIn(fx.repoDir, "add", "chain.txt");
    gitIn(fx.repoDir, "commit", "-q", "-m", "chain");
    const patches = chainPatches(20);
    for (const [i, patch] of patches.entries()) {
      const spec: EffectSpec = { kind: "git.patch", repo: "site", message: `line ${i + 1}`, patch };
      await fx.record(`patch-${String(i + 1).padStart(2, "0")}`, [spec]);
    }
    const drained = await fx.interpret();
    expect(drained.runs.done).toBe(20);
    const tree = gitIn(fx.repoDir, "rev-parse", "main^{tree}").trim();
    gitIn(fx.repoDir, "reset", "-q", "--hard", "HEAD~8");

    const plan = await dryRun(fx, "--all");
    expect(plan.summary).toEqual({ apply: 8, skip: 12, conflict: 0, uncertain: 0 });
    expect(plan.plan.filter((e) => e.action === "apply").map((e) => e.jobId)).toEqual(
      Array.from({ length: 8 }, (_, i) => `patch-${13 + i}`),
    );

    const r = await idem(["replay", "--all", "--yes", "--now", "--config", fx.ws.config]);
    expect(r.code, r.stderr).toBe(0);
    expect(gitIn(fx.repoDir, "rev-parse", "main^{tree}").trim()).toBe(tree);
    const audit = await idem(["audit", "--config", fx.ws.config]);
    expect(audit.code, audit.stdout).toBe(0);
  });

  it("after an incident losing 20 of 50 effects plans exactly those 20 without touching the journal, then restores each key once", async () => {
    fx = await opsFixture();
    for (let i = 0; i < 50; i++) {
      await fx.record(`job-${String(i).padStart(2, "0")}`, [commitSpec(`f/${i}.txt`, `${i}\n`)]);
    }
    expect((await fx.interpret()).runs.done).toBe(50);
    gitIn(fx.repoDir, "reset", "-q", "--hard", "HEAD~20");
    await fx.journal.close();

    const before = journalBytes(fx.journalPath);
    const plan = await dryRun(fx, "--all");
    expect(journalBytes(fx.journalPath)).toEqual(before);
    const lost = Array.from({ length: 20 }, (_, i) => `job-${30 + i}/0`);
    expect(plan.plan.filter((e) => e.action === "apply").map((e) => e.key)).toEqual(lost);
    expect(plan.summary).toEqual({ apply: 20, skip: 30, conflict: 0, uncertain: 0 });

    const table = await idem(["replay", "--all", "--dry-run", "--config", fx.ws.config]);
    expect(table.stdout).toContain("20 apply");
    expect(journalBytes(fx.journalPath)).toEqual(before);

    const r = await idem(["replay", "--all", "--now", "--yes", "--config", fx.ws.config]);
    expect(r.code, r.stderr).toBe(0);
    const log = gitIn(fx.repoDir, "log", "--format=%B", "main");
    for (let i = 0; i < 50; i++) {
      const key = `job-${String(i).padStart(2, "0")}/0`;
      expect(log.split("\n").filter((l) => l === `Idem-Effect: ${key}`)).toHaveLength(1);
    }
    const audit = await idem(["audit", "--json", "--config", fx.ws.config]);
    expect(audit.code, audit.stdout).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ duplicates: [], drift: [] });

    const again = await dryRun(fx, "--all");
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

    const plan = await dryRun(fx, "--job", "job-a", "job-b");
    expect(plan.plan.map((e) => [e.key, e.action])).toEqual([
      ["job-a/0", "skip"],
      ["job-b/0", "apply"],
    ]);
    expect(plan.plan[0]?.reason).toContain("superseded");
    expect(readFileSync(file, "utf8")).toBe("lost in an incident\n");

    const r = await idem([
      "replay",
      "--job",
      "job-a",
      "job-b",
      "--yes",
      "--now",
      "--config",
      fx.ws.config,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(file, "utf8")).toBe("B\n");
    const onlyA = await dryRun(fx, "--job", "job-a");
    expect(onlyA.plan.map((e) => e.action)).toEqual(["skip"]);
  });

  it("refuses without a terminal and without --yes, changing nothing; needs a selection", async () => {
    fx = await opsFixture();
    await fx.record("job-1", [commitSpec("a.txt", "a\n")]);
    await fx.interpret();
    const r = await idem(["replay", "--all", "--config", fx.ws.config]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--yes");
    expect((await fx.journal.runs.forJob("job-1")).map((x) => x.generation)).toEqual([1]);
    const none = await idem(["replay", "--config", fx.ws.config]);
    expect(none.code).toBe(2);

    const ok = await idem(["replay", "--job", "job-1", "--yes", "--config", fx.ws.config]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("running interpreter");
    const runs = await fx.journal.runs.forJob("job-1");
    expect(runs.map((x) => [x.generation, x.state])).toEqual([
      [1, "done"],
      [2, "pending"],
    ]);
  });
});
