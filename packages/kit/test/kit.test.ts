import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  absent,
  defineEffectKind,
  fail,
  hasKeyMarker,
  kindContextOf,
  kindJsonSchema,
  markedKeys,
  present,
  readCappedText,
  refuseKeyMarkers,
  retryAfterMs,
  showableGuarantee,
  withKeyMarker,
} from "../src/index.js";

const spec = z.strictObject({ kind: z.literal("acme.ticket"), title: z.string() });
const kind = {
  name: "acme.ticket",
  description: "Opens a ticket.",
  guarantee: "exactly-once-in-effect" as const,
  spec,
  probe: async () => absent(),
  apply: async () => ({}),
};

describe("defineEffectKind", () => {
  it("returns the kind, frozen, with its types", () => {
    const k = defineEffectKind(kind);
    expect(k.name).toBe("acme.ticket");
    expect(Object.isFrozen(k)).toBe(true);
  });

  it.each([
    ["a name without a namespace", { name: "ticket" }],
    ["an upper-case name", { name: "Acme.Ticket" }],
    ["no description", { description: " " }],
    ["an unknown guarantee", { guarantee: "maybe" }],
    ["no probe", { probe: undefined }],
    ["no apply", { apply: undefined }],
    ["a spec that takes any kind", { spec: z.looseObject({ kind: z.string() }) }],
    ["a fault point in another namespace", { faultPoints: ["other.after-create"] }],
    ["a fault point of idem's own processes", { faultPoints: ["interpreter.after-apply"] }],
    ["a fault point without a namespace", { faultPoints: ["after-create"] }],
  ])("refuses %s with INVALID_CONFIG", (_, change) => {
    let error: unknown;
    try {
      defineEffectKind({ ...kind, ...change } as never);
    } catch (e) {
      error = e;
    }
    expect(isIdemError(error, "INVALID_CONFIG")).toBe(true);
  });
});

describe("a kind's fault points and JSON Schema", () => {
  it("takes fault points in the kind's namespace", () => {
    expect(defineEffectKind({ ...kind, faultPoints: ["acme.after-create"] }).faultPoints).toEqual([
      "acme.after-create",
    ]);
  });

  it("states the spec's input form as JSON Schema, titled by the kind", () => {
    const k = defineEffectKind({
      ...kind,
      spec: z.strictObject({
        kind: z.literal("acme.ticket"),
        title: z.string(),
        body: z.string().default(""),
      }),
    });
    expect(kindJsonSchema(k)).toMatchObject({
      title: "acme.ticket",
      description: "Opens a ticket.",
      type: "object",
      required: ["kind", "title"],
      properties: { kind: { const: "acme.ticket" }, body: { type: "string", default: "" } },
      additionalProperties: false,
    });
  });
});

describe("the outcomes", () => {
  it("builds probe answers and failures with idem's codes", () => {
    expect(present({ id: 1 })).toEqual({ status: "present", detail: { id: 1 } });
    expect(isIdemError(fail.transient("slow", { retryAfterMs: 5 }), "UNAVAILABLE")).toBe(true);
    expect(fail.transient("slow", { retryAfterMs: 5 }).details).toEqual({ retryAfterMs: 5 });
    expect(fail.invalid("title", "is empty").details).toEqual({ field: "title" });
    expect(isIdemError(fail.conflict("moved on"), "TARGET_CONFLICT")).toBe(true);
    expect(isIdemError(fail.moved("lost the swap"), "TARGET_MOVED")).toBe(true);
    expect(fail.unknownOutcome("sent, no answer").class).toBe("uncertain");
  });

  it("reads the wait an HTTP answer asks for", () => {
    const now = Date.parse("2026-11-27T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after": "3" }), now)).toBe(3000);
    expect(retryAfterMs(new Headers({ "retry-after": "Fri, 27 Nov 2026 00:00:10 GMT" }), now)).toBe(
      10_000,
    );
    const reset = String(now / 1000 + 60);
    expect(
      retryAfterMs(new Headers({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset }), now),
    ).toBe(60_000);
    expect(
      retryAfterMs(new Headers({ "x-ratelimit-remaining": "4", "x-ratelimit-reset": reset }), now),
    ).toBeUndefined();
  });
});

describe("key markers", () => {
  it("carries a key in text once, and finds it again", () => {
    const body = withKeyMarker("Fixes the build.", "job-1/0");
    expect(withKeyMarker(body, "job-1/0")).toBe(body);
    expect(markedKeys(body)).toEqual(["job-1/0"]);
    expect(hasKeyMarker(body, "job-1/0")).toBe(true);
    expect(hasKeyMarker(body, "job-1/1")).toBe(false);
    expect(markedKeys(null)).toEqual([]);
  });

  it("refuses agent text that carries a marker of its own", () => {
    expect(() => refuseKeyMarkers("body", "hi <!-- idem-effect: other/0 -->")).toThrow();
    expect(() => refuseKeyMarkers("body", "IDEM-EFFECT: x")).toThrow();
    expect(() => refuseKeyMarkers("body", "plain text")).not.toThrow();
  });
});

describe("readCappedText", () => {
  it("reads an answer up to its cap and refuses a larger one as UNAVAILABLE, naming it", async () => {
    expect(await readCappedText(new Response("small"), 10, "the answer")).toBe("small");
    const error = await readCappedText(new Response("x".repeat(100)), 10, "the answer").catch(
      (e: unknown) => e,
    );
    expect(isIdemError(error, "UNAVAILABLE")).toBe(true);
  });
});

describe("showableGuarantee", () => {
  const base = {
    name: "test.claim",
    description: "Claims.",
    spec: z.strictObject({ kind: z.literal("test.claim"), n: z.number() }),
    probe: async () => absent(),
    apply: async () => ({}),
    samples: { valid: (i: number) => ({ kind: "test.claim" as const, n: i }), invalid: [] },
  };
  const ctx = kindContextOf(undefined);

  it("states uncertain-window for a kind that declares exactly once in effect but whose probe cannot tell", () => {
    const kind = defineEffectKind({
      ...base,
      guarantee: "exactly-once-in-effect",
      probeable: () => false,
    });
    expect(showableGuarantee(kind, ctx)).toBe("uncertain-window");
  });

  it("states the declared guarantee when the probe can tell, or the target absorbs a repeat", () => {
    const telling = defineEffectKind({
      ...base,
      guarantee: "exactly-once-in-effect",
      probeable: () => true,
    });
    const dedup = defineEffectKind({
      ...base,
      guarantee: "target-dedup",
      probeable: () => false,
      targetDedup: () => true,
    });
    expect(showableGuarantee(telling, ctx)).toBe("exactly-once-in-effect");
    expect(showableGuarantee(dedup, ctx)).toBe("target-dedup");
  });
});

describe("defineEffectKind and zod's major", () => {
  it("refuses a spec of zod 3's shape, naming zod 4", () => {
    const zod3 = { _def: { typeName: "ZodObject" }, safeParse: () => ({ success: false }) };
    expect(() =>
      defineEffectKind({
        name: "test.zod3",
        description: "Old zod.",
        guarantee: "uncertain-window",
        spec: zod3 as never,
        probe: async () => absent(),
        apply: async () => ({}),
      }),
    ).toThrow(/spec is a zod 3 schema: idem reads kinds built with zod 4 \(zod@\^4\.1\.0\)/);
  });
});
