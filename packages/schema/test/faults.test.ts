import { describe, expect, it } from "vitest";
import { createFaultHook, FAULT_POINTS, isKindFaultPoint } from "../src/index.js";

describe("createFaultHook", () => {
  it("fires at the n-th time the point is reached, once", () => {
    const hits: string[] = [];
    const hook = createFaultHook(`${FAULT_POINTS.INTERPRETER_AFTER_APPLY}:2`, (p) => hits.push(p));
    for (let i = 0; i < 4; i++) hook(FAULT_POINTS.INTERPRETER_AFTER_APPLY);
    hook(FAULT_POINTS.INTERPRETER_AFTER_CLAIM);
    expect(hits).toEqual([FAULT_POINTS.INTERPRETER_AFTER_APPLY]);
  });

  it("takes an effect kind's own point by name (the kinds load after the hook is built)", () => {
    const hits: string[] = [];
    const hook = createFaultHook("acme.after-create", (p) => hits.push(p));
    hook("acme.after-create" as never);
    expect(hits).toEqual(["acme.after-create"]);
  });

  it.each([
    ["a typo in idem's own namespace", "interpreter.after-aply"],
    ["an executor point that does not exist", "executor.before-run"],
    ["a name without a namespace", "after-create"],
    ["an upper-case name", "Acme.after-create"],
    ["a bad count", `${FAULT_POINTS.INTERPRETER_AFTER_APPLY}:0`],
  ])("refuses %s, so a typo never silently disarms a drill", (_what, spec) => {
    expect(() => createFaultHook(spec, () => {})).toThrow(TypeError);
  });
});

describe("isKindFaultPoint", () => {
  it("is a dotted name outside the namespaces of idem's processes", () => {
    expect(isKindFaultPoint("acme.after-create")).toBe(true);
    expect(isKindFaultPoint("acme.ticket.after-create")).toBe(true);
    expect(isKindFaultPoint("interpreter.after-apply")).toBe(false);
    expect(isKindFaultPoint("journal-copy.x")).toBe(false);
    expect(isKindFaultPoint(`acme.${"x".repeat(70)}`)).toBe(false);
  });
});
