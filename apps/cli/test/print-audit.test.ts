import { describe, expect, it } from "vitest";
import { shortLocations } from "../src/render/print-audit.js";

describe("shortLocations (idem audit's locations column)", () => {
  it("cuts git object names to 12 characters when that keeps them apart", () => {
    const a = "0123456789ab".padEnd(40, "0");
    const b = "fedcba987654".padEnd(40, "1");
    expect(shortLocations([a, b])).toBe("0123456789ab fedcba987654");
  });

  it("prints whole what 12 characters would make the same, and what is not a git object name", () => {
    expect(shortLocations(["1765090000000-0", "1765090000000-1"])).toBe(
      "1765090000000-0 1765090000000-1",
    );
    const a = "0123456789ab".padEnd(40, "0");
    const b = "0123456789ab".padEnd(40, "1");
    expect(shortLocations([a, b])).toBe(`${a} ${b}`);
    expect(shortLocations(["T-17", "T-18"])).toBe("T-17 T-18");
  });
});
