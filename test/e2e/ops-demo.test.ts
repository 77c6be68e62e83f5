import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { idem } from "../../apps/cli/test/ops-helpers.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("idem demo", () => {
  it("runs the main job with crashes injected and ends in a clean audit: every key once, 0 duplicates", async () => {
    dir = join(mkdtempSync(join(tmpdir(), "idem-demo-test-")), "ws");
    // The demo's own deadline and the test's are far beyond a run on a busy machine: the outcome
    // is the audit, not how long it took.
    const r = await idem(["demo", "--dir", dir, "--seed", "7", "--json", "--timeout", "600"], {
      timeoutMs: 660_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      clean: boolean;
      effects: number;
      effectStates: {
        total: number;
        firstRun: Record<string, number>;
        final: Record<string, number> & { applied: number; present: number; skipped: number };
      };
      kills: { executor: number; interpreter: number };
      crashPoints: string[];
      crashesAfterApply: number;
      presentAfterCrash: number;
      audit: {
        enqueued: number;
        outputs: number;
        duplicates: unknown[];
        drift: unknown[];
        duplicateEffectsAtTargets: number;
        effects: { applied: number };
      };
    };
    expect(out.clean).toBe(true);
    expect(out.audit).toMatchObject({
      enqueued: 30,
      outputs: 30,
      duplicates: [],
      drift: [],
      duplicateEffectsAtTargets: 0,
    });
    // Each effect counted once (issue 36: the audit's events over two generations added up to
    // more than the effects): by its first run, and by its final state after the replay.
    const states = out.effectStates;
    const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
    expect(states.total).toBe(out.effects);
    expect(sum(states.firstRun)).toBe(out.effects);
    expect(sum(states.final)).toBe(out.effects);
    expect(states.final.applied).toBe(0);
    expect(states.final.present + states.final.skipped).toBe(out.effects);
    expect(states.final.skipped).toBeGreaterThan(0);
    expect(out.kills.executor + out.kills.interpreter).toBeGreaterThan(0);
    // The seeded schedule always shows a crash between an apply and its record, and the next
    // interpreter finding that effect already at its target.
    expect(out.crashPoints[0]).toBeDefined();
    expect(out.crashesAfterApply).toBeGreaterThan(0);
    expect(out.crashPoints).toContain("interpreter.after-apply:1");
    expect(out.presentAfterCrash).toBeGreaterThan(0);
    expect(states.firstRun.present).toBeGreaterThan(0);
    expect(r.stderr).toContain("killed");
    expect(r.stderr).toContain("plan: 0 apply");

    // Every git effect key is on exactly one commit of the branch.
    const log = execFileSync("git", ["-C", join(dir, "repos/site"), "log", "--format=%B"], {
      encoding: "utf8",
    });
    const keys = log.split("\n").filter((l) => l.startsWith("Idem-Effect: "));
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(30);
    // status.md holds the last report's bytes: never rolled back by the replay.
    expect(readFileSync(join(dir, "outbox/status.md"), "utf8")).toContain("#30");
  }, 700_000);

  it("says in its summary that a crash fell between an apply and its record, even with one crash", async () => {
    dir = join(mkdtempSync(join(tmpdir(), "idem-demo-test-")), "ws");
    const r = await idem(
      ["demo", "--dir", dir, "--jobs", "6", "--crashes", "1", "--seed", "3", "--timeout", "600"],
      { timeoutMs: 660_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("killed interpreter at interpreter.after-apply:1");
    expect(r.stdout).toMatch(
      /1 crash\(es\) between an apply and its record: the next interpreter probed, found \d+ effect\(s\) already at their target, and did not send them again/,
    );
  }, 700_000);

  it("refuses a workspace folder that is not empty", async () => {
    dir = mkdtempSync(join(tmpdir(), "idem-demo-test-"));
    writeFileSync(join(dir, "keep.txt"), "mine\n");
    const r = await idem(["demo", "--dir", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not empty");
  });
});
