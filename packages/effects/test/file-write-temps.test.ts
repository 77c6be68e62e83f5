import { describe, expect, it } from "vitest";
import { isStaleTemp, STALE_TEMP_MS, tempName } from "../src/kinds/file-write/file-write-temps.js";

const dead = () => false;
const alive = () => true;

describe("isStaleTemp", () => {
  it("takes this process's own temporary names for its own, never stale while young", () => {
    const name = tempName();
    expect(name).toMatch(new RegExp(`^\\.idem-${process.pid}-[0-9a-f]{12}\\.tmp$`));
    expect(isStaleTemp(name, 0, dead)).toBe(false);
  });

  it("is stale when the writer it names is gone, or when it is older than the bound", () => {
    expect(isStaleTemp(".idem-999999-0123456789ab.tmp", 0, dead)).toBe(true);
    expect(isStaleTemp(".idem-999999-0123456789ab.tmp", 0, alive)).toBe(false);
    expect(isStaleTemp(".idem-999999-0123456789ab.tmp", STALE_TEMP_MS + 1, alive)).toBe(true);
    // Names from before they carried a pid: by age only.
    expect(isStaleTemp(".idem-0123456789ab.tmp", 1000, dead)).toBe(false);
    expect(isStaleTemp(".idem-0123456789ab.tmp", STALE_TEMP_MS + 1, dead)).toBe(true);
  });

  it("never takes another name for idem's", () => {
    for (const name of [".idem-notes.tmp", "idem-1-0123456789ab.tmp", ".idem-1-0123456789ab.tmp.x"])
      expect(isStaleTemp(name, STALE_TEMP_MS * 10, dead)).toBe(false);
  });
});
