import { describe, expect, it } from "vitest";
import { printEffectSummary } from "../src/demo/effect-summary.js";

const counts = (c: Partial<Record<string, number>>) => ({
  intended: 0,
  applied: 0,
  present: 0,
  failed: 0,
  uncertain: 0,
  skipped: 0,
  ...c,
});

describe("the demo's effect summary", () => {
  it("counts each effect once, by its first run and its final state, and says what skipped is", () => {
    const text = printEffectSummary({
      total: 50,
      firstRun: counts({ applied: 48, present: 1, skipped: 1 }),
      final: counts({ present: 41, skipped: 9 }),
    });
    expect(text).toContain("each of the 50 effects counted once");
    expect(text).toMatch(/the first run[\s\S]*applied +│ 48/);
    expect(text).toMatch(/after the replay \(final state\)[\s\S]*not sent again +│ 41/);
    expect(text).toContain("skipped: a file.write whose file a later recorded output also writes");
    expect(text).toContain("found present: an interpreter killed after applying it");
  });
});
