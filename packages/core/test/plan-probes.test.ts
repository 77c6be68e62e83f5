import { createEffects, targetsOfEffect } from "@idem/effects";
import { type EffectSpec, parseConfig } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { targetNames } from "../src/replay/plan-probes.js";

describe("targetNames", () => {
  it("names each effect's target as the kinds' targets do, a git branch named or left to the config", () => {
    const parsed = parseConfig(
      { repos: { site: { path: "repos/site", branch: "trunk", branches: ["release"] } } },
      { dir: "/tmp/idem-target-names" },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const config = parsed.config;
    const specs: EffectSpec[] = [
      { kind: "git.commit", repo: "site", message: "m", files: [] },
      { kind: "git.commit", repo: "site", branch: "release", message: "m", files: [] },
      { kind: "git.patch", repo: "site", message: "m", patch: "" },
      { kind: "git.commit", repo: "site", branch: "trunk", message: "m", files: [] },
      { kind: "git.commit", repo: "docs", message: "m", files: [] },
      { kind: "git.patch", repo: "docs", branch: "release", message: "m", patch: "" },
      { kind: "file.write", root: "out", path: "a.txt", content: "x" },
      { kind: "nats.publish", target: "events", subject: "s", data: "d" },
    ];
    const effects = createEffects(config);
    const targetOf = targetNames(effects);
    expect(specs.map((s) => targetOf(s))).toEqual(
      specs.map((s) => targetsOfEffect(s, effects.kinds)[0]),
    );
    expect(targetOf(specs[0] as EffectSpec)).toBe("repo:site@trunk");
    expect(targetOf(specs[1] as EffectSpec)).toBe("repo:site@release");
  });
});
