import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { unsafeHttpHeaderValue } from "../src/http-header-value.js";
import { unsafeUrlPath } from "../src/unsafe-relative-path.js";

describe("unsafeHttpHeaderValue", () => {
  it.each(["text/plain", "René", "\u00ff", "a\tb", "x=1; y=2", ""])("accepts %j", (v) => {
    expect(unsafeHttpHeaderValue(v)).toBeUndefined();
  });

  it.each([
    ["\u0100", /U\+0100, above U\+00FF/],
    ["René €", /U\+20AC/],
    ["\u{1F600}", /U\+1F600/],
    ["a\u0001b", /control character U\+0001/],
    ["a\u007fb", /control character U\+007F/],
    ["a\rb", /control/],
    [" lead", /start or end/],
    ["trail\t", /start or end/],
  ])("refuses %j", (v, why) => {
    expect(unsafeHttpHeaderValue(v)).toMatch(why);
  });

  it("refuses exactly what fetch refuses to send or would change on the way", async () => {
    // What a real server receives (Node reads header bytes as latin1, as fetch wrote them).
    let got: string | undefined;
    const server = createServer((req, res) => {
      got = req.headers["x-a"] as string | undefined;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      for (const v of [
        "René",
        "\u00ff",
        "a\tb",
        "x",
        "\u0100",
        "a\u0001b",
        "a\u007fb",
        " lead",
        "€",
      ]) {
        got = undefined;
        const arrived = await fetch(`http://127.0.0.1:${port}/`, { headers: { "x-a": v } })
          .then(() => got === v)
          .catch(() => false);
        expect(unsafeHttpHeaderValue(v) === undefined, JSON.stringify(v)).toBe(arrived);
      }
    } finally {
      server.close();
    }
  });
});

describe("unsafeUrlPath", () => {
  it.each(["/hook", "/a/b.c/d", "/a%20b", "/%25", "/a;b/c", "/v1/items?x=1", "", "/"])(
    "accepts %j",
    (p) => {
      expect(unsafeUrlPath(p)).toBeUndefined();
    },
  );

  it.each([
    "/x/..;/y",
    "/x/.;a/y",
    "/x/..;jsessionid=1/admin",
    "/%2e%2e/admin",
    "/%252e%252e/admin",
    "/%25252e%25252e/admin",
    "/a/%25%32%65%25%32%65/b",
    "/a%252fb",
    "/a%255cb",
    "/..%3b/x",
    "/a%00b",
    "/x/../y",
    "/x/./y",
    "//evil.example/x",
    "http://evil.example/",
  ])("refuses %j", (p) => {
    expect(unsafeUrlPath(p)).toBeDefined();
  });
});
