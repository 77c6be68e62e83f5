import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { absent, defineEffectKind, openKind, present } from "../src/index.js";

/** A kind whose target is a Map in memory: what a kind's own tests look like. */
function memoryKind() {
  const opened: string[] = [];
  const store = new Map<string, string>();
  const kind = defineEffectKind({
    name: "test.note",
    description: "Keeps a note.",
    guarantee: "exactly-once-in-effect",
    spec: z.strictObject({ kind: z.literal("test.note"), text: z.string().min(1) }),
    options: z.strictObject({ tokenEnv: z.string() }),
    open: (ctx) => {
      opened.push(ctx.env(ctx.options.tokenEnv));
      return store;
    },
    probe: async (_spec, call) => (call.resource.has(call.key) ? present() : absent()),
    apply: async (spec, call) => {
      if (!call.resource.has(call.key)) call.resource.set(call.key, spec.text);
      return { stored: true };
    },
    scan: {
      target: () => "memory",
      keys: async (_spec, call) => new Map([...call.resource.keys()].map((k) => [k, [k]])),
    },
  });
  return { kind, store, opened };
}

describe("openKind", () => {
  it("opens the kind's resource once, with its credential from the named variable", async () => {
    const { kind, opened } = memoryKind();
    const k = openKind(kind, { options: { tokenEnv: "NOTE_TOKEN" }, env: { NOTE_TOKEN: "t0" } });
    const spec = k.check({ kind: "test.note", text: "hi" });
    expect((await k.probe(spec, "j/0")).status).toBe("absent");
    await k.apply(spec, "j/0");
    await k.apply(spec, "j/0");
    expect((await k.probe(spec, "j/0")).status).toBe("present");
    expect([...((await k.scan(spec)) ?? new Map()).keys()]).toEqual(["j/0"]);
    expect(opened).toEqual(["t0"]);
    await k.close();
  });

  it("refuses options its schema refuses, and names an unset variable without a value", async () => {
    const { kind } = memoryKind();
    expect(() => openKind(kind, { options: {} })).toThrow(/kinds\.test\.note\.options\.tokenEnv/);
    const k = openKind(kind, { options: { tokenEnv: "NOT_SET_HERE" }, env: {} });
    const error = await k.probe({ kind: "test.note" }, "j/0").catch((e: unknown) => e);
    expect(isIdemError(error, "INVALID_CONFIG")).toBe(true);
    expect((error as Error).message).toContain("NOT_SET_HERE");
  });

  it("checks a spec with the kind's schema, naming the field", () => {
    const { kind } = memoryKind();
    const k = openKind(kind, { options: { tokenEnv: "X" } });
    let error: unknown;
    try {
      k.check({ kind: "test.note", text: "" });
    } catch (e) {
      error = e;
    }
    expect(isIdemError(error, "INVALID_INPUT")).toBe(true);
    expect((error as { details?: { field?: string } }).details?.field).toBe("text");
  });
});
