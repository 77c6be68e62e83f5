import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseStrictJson } from "../src/strict-json.js";

const paths = (input: string | Uint8Array) => {
  const r = parseStrictJson(input);
  return r.ok ? [] : r.issues.map((i) => i.path);
};

describe("parseStrictJson", () => {
  it("answers JSON.parse's value for what it keeps as sent", () => {
    const text = '{"a":[1,-2.5,1e300,9007199254740991,-9007199254740991],"b":{"c":"\\u00e9"}}';
    expect(parseStrictJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
    expect(parseStrictJson(Buffer.from(text))).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it("refuses a key twice in one object, naming it, also when spelled with escapes", () => {
    expect(paths('{"a":1,"a":2}')).toEqual(["a"]);
    expect(paths('{"x":{"a":1,"\\u0061":2}}')).toEqual(["x.a"]);
    expect(paths('{"e":[{"p":1},{"p":1,"q":{"p":2},"p":3}]}')).toEqual(["e.1.p"]);
    // The same key in two objects, or as a value, is fine.
    expect(paths('{"a":{"a":"a"},"b":{"a":"a"}}')).toEqual([]);
    expect(paths('{"k\\"":1,"k":2}')).toEqual([]);
  });

  it("refuses integers beyond 2^53 - 1 and numbers beyond a double, naming where they are", () => {
    expect(paths('{"n":9007199254740993}')).toEqual(["n"]);
    expect(paths("[1,-9007199254740992]")).toEqual(["1"]);
    expect(paths('{"a":{"b":[0,1e400]}}')).toEqual(["a.b.1"]);
    expect(paths('{"s":"9007199254740993"}')).toEqual([]);
  });

  it("refuses bytes that are not UTF-8, where text would have read them as U+FFFD", () => {
    const bad = Buffer.from('{"a":"x?y"}', "latin1");
    bad[7] = 0xff;
    const r = parseStrictJson(bad);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.issues[0]?.message).toMatch(/UTF-8 \(at byte 7\)/);
    // A truncated sequence too; a BOM is dropped, as JSON readers do.
    expect(parseStrictJson(Buffer.from([0x22, 0xe2, 0x82, 0x22])).ok).toBe(false);
    expect(parseStrictJson(Buffer.from("\ufeff[1]")).ok).toBe(true);
  });

  it("names a syntax error's line and column", () => {
    const r = parseStrictJson('{\n "a": 1,\n}');
    expect(!r.ok && r.issues[0]).toMatchObject({ path: "", message: /line 3/ });
  });

  it("finds every duplicate key fast-check plants in generated JSON, and nothing else", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
        fc.string(),
        (o, k) => {
          const text = JSON.stringify(o);
          // What JSON.stringify writes is kept, unless it wrote an integer of 16 digits or more.
          const safe = !/(^|[^.\d])\d{16,}/.test(text);
          if (safe) expect(parseStrictJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
          const dup = `{${JSON.stringify(k)}:1,${text.slice(1, -1)}${text === "{}" ? "" : ","}${JSON.stringify(k)}:2}`;
          expect(paths(dup)).toContain(k);
        },
      ),
      { numRuns: 300, seed: 12 },
    );
  });
});
