import type { Claim, EffectRecord } from "@idem/journal";
import { describe, expect, it } from "vitest";
import { claimedHistory } from "../src/interpret/interpret-effect.js";

const row = (key: string, generation: number) =>
  ({ key, generation, state: "applied" }) as unknown as EffectRecord;

describe("claimedHistory", () => {
  it("answers each key's rows from the claim once, then leaves the read to the journal", () => {
    const history = [row("j/0", 1), row("j/1", 1), row("j/0", 2)];
    const claim = { history } as unknown as Claim;
    expect(claimedHistory(claim, "j/0")).toEqual([row("j/0", 1), row("j/0", 2)]);
    expect(claimedHistory(claim, "j/2")).toEqual([]);
    // Read already: the run may have written the key since.
    expect(claimedHistory(claim, "j/0")).toBeUndefined();
    expect(claimedHistory(claim, "j/2")).toBeUndefined();
    expect(claimedHistory(claim, "j/1")).toEqual([row("j/1", 1)]);
  });

  it("answers nothing for a claim the store read no history with", () => {
    expect(claimedHistory({} as Claim, "j/0")).toBeUndefined();
  });
});
