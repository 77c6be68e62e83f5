// The kit's reading of what a target answers: one capped reader (streamed, the rest never read)
// and one redaction of the credentials this process sent, in every form a target echoes them.
import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { readCappedText, readTextPrefix, redactSent } from "../src/index.js";

/** A body of `chunks` chunks of 1 KiB, counting how many were pulled. */
function answer(chunks: number) {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulled === chunks) return c.close();
      pulled += 1;
      c.enqueue(new Uint8Array(1024).fill(0x61));
    },
  });
  return { res: new Response(body), pulled: () => pulled };
}

describe("readTextPrefix and readCappedText", () => {
  it("read a small body whole, and no more than the cap of a large one", async () => {
    expect(await readTextPrefix(new Response("héllo"), 100)).toEqual({
      text: "héllo",
      truncated: false,
    });
    const big = answer(1_000_000);
    const { text, truncated } = await readTextPrefix(big.res, 4000);
    expect(truncated).toBe(true);
    expect(text).toHaveLength(4000);
    expect(big.pulled()).toBeLessThan(10);
  });

  it("refuses a body over the cap with UNAVAILABLE naming what it was", async () => {
    expect(await readCappedText(new Response("{}"), 2, "the answer")).toBe("{}");
    const e = await readCappedText(answer(100).res, 2048, "the answer").catch((x: unknown) => x);
    expect(isIdemError(e, "UNAVAILABLE")).toBe(true);
  });
});

describe("redactSent", () => {
  it("takes out a header's value, its token, a Basic pair's password, escaped and encoded", () => {
    const basic = `Basic ${Buffer.from("robot:pa ss/wörd").toString("base64")}`;
    const text = [
      "Authorization: Bearer t0k-en-42",
      'token "t0k-en-42"',
      "?q=t0k-en-42",
      "user robot:pa ss/wörd",
      "pass pa%20ss%2Fw%C3%B6rd",
      basic,
    ].join("\n");
    const out = redactSent(text, ["Bearer t0k-en-42", basic, undefined, ""]);
    for (const secret of ["t0k-en-42", "pa ss/wörd", "pa%20ss%2Fw%C3%B6rd", basic])
      expect(out).not.toContain(secret);
    expect(out).toContain("Authorization: ***");
  });

  it("leaves text without a credential as it was, and never takes out a short scheme alone", () => {
    expect(redactSent("Bearer of good news", ["Bearer xy"])).toBe("Bearer of good news");
    expect(redactSent("nothing here", [])).toBe("nothing here");
  });
});
