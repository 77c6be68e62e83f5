import { BUILT_IN_KINDS, kindRegistryOf, supersedeKeyOf } from "@idem/effects";
import type { EffectRecord, EffectState } from "@idem/journal";
import type { EffectSpec } from "@idem/schema";
import { defaultConfig } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { decideEffect } from "../src/decide/decide-effect.js";

const effects = {
  probeable: (s: EffectSpec) =>
    s.kind !== "nats.publish" && !(s.kind === "http.request" && s.target === "blind"),
  targetDedup: (s: EffectSpec) => s.kind !== "http.request" || s.target === "dedup",
};
const commit: EffectSpec = { kind: "git.commit", repo: "site", message: "m", files: [] };
const write: EffectSpec = { kind: "file.write", root: "out", path: "a.txt", content: "x" };
const nats: EffectSpec = { kind: "nats.publish", target: "events", subject: "s", data: "d" };
const blind: EffectSpec = { kind: "http.request", target: "blind", method: "POST", path: "/x" };

function row(generation: number, state: EffectState): EffectRecord {
  return {
    key: "job-1/0",
    generation,
    jobId: "job-1",
    idx: 0,
    kind: "x",
    specHash: "h",
    state,
    detail: null,
    attempts: 1,
    updatedAt: 0,
  };
}
const decide = (
  spec: EffectSpec,
  ledger: EffectRecord[],
  more: { generation?: number; forceUnprobeable?: boolean; supersededBy?: string } = {},
) =>
  decideEffect({
    spec,
    key: "job-1/0",
    generation: more.generation ?? 2,
    ledger,
    forceUnprobeable: more.forceUnprobeable ?? false,
    effects,
    supersededBy: more.supersededBy,
  });

describe("decideEffect", () => {
  it("skips an effect settled in its own generation", () => {
    for (const s of ["applied", "present", "skipped"] as const) {
      expect(decide(commit, [row(2, s)]).action).toBe("skip");
      expect(decide(blind, [row(2, s)]).action).toBe("skip");
    }
  });

  it("probes a probeable kind whatever earlier generations say", () => {
    expect(decide(commit, [])).toEqual({ action: "probe" });
    expect(decide(commit, [row(1, "applied")])).toEqual({ action: "probe" });
    expect(decide(commit, [row(2, "intended")])).toEqual({ action: "probe" });
    expect(decide(write, [row(1, "uncertain"), row(2, "failed")])).toEqual({ action: "probe" });
  });

  it("skips an unprobeable effect applied in an earlier generation unless forced", () => {
    expect(decide(nats, [row(1, "applied")]).action).toBe("skip");
    expect(decide(blind, [row(1, "applied")]).action).toBe("skip");
    expect(decide(blind, [row(1, "applied")], { forceUnprobeable: true }).action).toBe(
      "apply-unprobeable",
    );
  });

  it("calls an unanswered intent of an unprobeable kind without target dedup uncertain", () => {
    expect(decide(blind, [row(2, "intended")]).action).toBe("uncertain");
    expect(decide(blind, [row(1, "intended")]).action).toBe("uncertain");
    expect(decide(blind, [row(1, "uncertain")]).action).toBe("uncertain");
    expect(decide(blind, [row(2, "uncertain")]).action).toBe("uncertain");
    // forced: an earlier unknown outcome is re-sent once, but never one of this generation
    expect(decide(blind, [row(1, "intended")], { forceUnprobeable: true }).action).toBe(
      "apply-unprobeable",
    );
    expect(decide(blind, [row(2, "intended")], { forceUnprobeable: true }).action).toBe(
      "uncertain",
    );
  });

  it("takes an unknown outcome as answered by a person's settlement in a later generation, whatever came first", () => {
    // dlq retry (or a replay) before the resolve: gen 2 inherited gen 1's doubt, then was resolved.
    const resolvedLater = [row(1, "uncertain"), row(2, "skipped")];
    expect(decide(blind, resolvedLater, { generation: 3 }).action).toBe("apply-unprobeable");
    // Not answered: a later generation that failed, or was itself cut off, leaves the doubt.
    expect(decide(blind, [row(1, "uncertain"), row(2, "failed")], { generation: 3 }).action).toBe(
      "uncertain",
    );
    expect(decide(blind, [row(1, "skipped"), row(2, "intended")], { generation: 3 }).action).toBe(
      "uncertain",
    );
  });

  it("re-sends an unprobeable kind the target deduplicates", () => {
    expect(decide(nats, [])).toEqual({ action: "apply-unprobeable" });
    expect(decide(nats, [row(2, "intended")])).toEqual({ action: "apply-unprobeable" });
    expect(decide(nats, [row(1, "intended")])).toEqual({ action: "apply-unprobeable" });
  });

  it("sends an unprobeable effect that never ran or failed for certain", () => {
    expect(decide(blind, [])).toEqual({ action: "apply-unprobeable" });
    expect(decide(blind, [row(2, "failed")])).toEqual({ action: "apply-unprobeable" });
    expect(decide(blind, [row(1, "skipped")])).toEqual({ action: "apply-unprobeable" });
  });

  it("skips a superseded file.write instead of rolling it back", () => {
    const d = decide(write, [row(1, "applied")], { supersededBy: "job-9" });
    expect(d.action).toBe("skip");
    expect(d.action === "skip" && d.reason).toContain("job-9");
    // settled in this generation wins over supersession; other kinds are never superseded (their
    // kind has no supersede key, so the index answers nothing for them)
    expect(decide(write, [row(2, "applied")], { supersededBy: "job-9" }).action).toBe("skip");
    const kinds = kindRegistryOf(defaultConfig("/tmp"), BUILT_IN_KINDS);
    expect(supersedeKeyOf(commit, kinds)).toBeUndefined();
    expect(supersedeKeyOf(write, kinds)).toBeDefined();
  });
});
