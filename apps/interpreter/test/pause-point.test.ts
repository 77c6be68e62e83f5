import { FAULT_POINTS, type FaultPoint } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { withPausePoint } from "../src/pause-point.js";

// The SIGSTOP itself is exercised end to end by test/chaos/postgres-fencing.int.test.ts.
describe("IDEM_PAUSE", () => {
  it("unset or empty leaves the fault hook as it is", () => {
    const fault = (_p: FaultPoint) => {};
    expect(withPausePoint(fault, undefined)).toBe(fault);
    expect(withPausePoint(fault, "")).toBe(fault);
  });

  it("a typo never silently disarms a drill: an unknown point or a bad count throws", () => {
    expect(() => withPausePoint(() => {}, "interpreter.after-clam")).toThrow(/unknown fault point/);
    expect(() => withPausePoint(() => {}, "interpreter.after-claim:0")).toThrow(/bad count/);
  });

  it("armed, the IDEM_FAULT hook still sees every point", () => {
    const seen: FaultPoint[] = [];
    const hook = withPausePoint((p) => seen.push(p), "interpreter.before-done:1000");
    hook(FAULT_POINTS.INTERPRETER_AFTER_CLAIM);
    hook(FAULT_POINTS.INTERPRETER_BEFORE_DONE);
    expect(seen).toEqual([
      FAULT_POINTS.INTERPRETER_AFTER_CLAIM,
      FAULT_POINTS.INTERPRETER_BEFORE_DONE,
    ]);
  });
});
