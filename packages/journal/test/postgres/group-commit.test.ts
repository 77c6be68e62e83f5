import { IdemError, isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/store/postgres/group-commit.js";

type Req = { key: string; value: number };
const code = (r: PromiseSettledResult<number>) =>
  r.status === "fulfilled" ? r.value : isIdemError(r.reason) ? r.reason.code : "other";

/** A GroupCommit whose writes note what went alone and in batches. */
function group(batchFails?: () => Error) {
  const alone: Req[] = [];
  const batches: Req[][] = [];
  const g = new GroupCommit<Req, number>({
    alone: async (r) => {
      alone.push(r);
      if (r.value < 0) throw new IdemError("INVALID_INPUT", "negative");
      return r.value * 10;
    },
    batch: async (rs) => {
      batches.push(rs);
      const fail = batchFails?.();
      if (fail) throw fail;
      return rs.map((r) => ({ status: "fulfilled", value: r.value * 10 }));
    },
    keyOf: (r) => r.key,
  });
  return { g, alone, batches };
}

describe("GroupCommit", () => {
  it("writes a lone request alone, the requests of one tick together, and one key once per statement", async () => {
    const { g, alone, batches } = group();
    expect(await g.submit({ key: "a", value: 1 })).toBe(10);
    expect(alone.map((r) => r.key)).toEqual(["a"]);
    const answers = await Promise.all([
      g.submit({ key: "a", value: 2 }),
      g.submit({ key: "b", value: 3 }),
      g.submit({ key: "a", value: 4 }),
      g.submit({ key: "c", value: 5 }),
    ]);
    expect(answers).toEqual([20, 30, 40, 50]);
    // The second "a" waits for the statement holding the first, then goes alone.
    expect(batches.map((b) => b.map((r) => r.key))).toEqual([["a", "b", "c"]]);
    expect(alone.map((r) => r.value)).toEqual([1, 4]);
  });

  it("sends each request of a failed batch alone, so only the one refused fails", async () => {
    const { g, alone } = group(() => new Error("a value the server refuses"));
    const answers = await Promise.allSettled([
      g.submit({ key: "a", value: 1 }),
      g.submit({ key: "b", value: -1 }),
    ]);
    expect(answers.map(code)).toEqual([10, "INVALID_INPUT"]);
    expect(alone.map((r) => r.key)).toEqual(["a", "b"]);
  });

  it("fails every request of a batch the server did not answer (UNAVAILABLE), none sent again", async () => {
    const { g, alone } = group(() => new IdemError("UNAVAILABLE", "gone"));
    const answers = await Promise.allSettled([
      g.submit({ key: "a", value: 1 }),
      g.submit({ key: "b", value: 2 }),
    ]);
    expect(answers.map(code)).toEqual(["UNAVAILABLE", "UNAVAILABLE"]);
    expect(alone).toEqual([]);
  });
});
