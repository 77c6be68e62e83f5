// The tools made from the kind registry, in process: the names, the schemas and descriptions a
// model reads, no tool for a kind the config gives nothing to act on, and the refusal of two kinds
// with one tool name.
import { kindsOf, loadKinds } from "@idem/core";
import { defineEffectKind } from "@idem/kit";
import { effectToolName, effectToolsOf } from "@idem/mcp";
import { type Config, parseConfig } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { z } from "zod";

/** A kind of the config's own named `name`, its spec a union of two shapes. */
const kindNamed = (name: string, guarantee: "uncertain-window" | "exactly-once" = "exactly-once") =>
  defineEffectKind({
    name,
    description: `Does ${name}.`,
    guarantee,
    spec: z.union([
      z.strictObject({ kind: z.literal(name), text: z.string().min(1) }),
      z.strictObject({ kind: z.literal(name), count: z.number().int() }),
    ]),
    probe: async () => ({ status: "absent", detail: {} }),
    apply: async () => ({}),
  });

async function configWith(kinds: string[], extra: Record<string, unknown> = {}): Promise<Config> {
  const r = parseConfig(
    {
      kinds: Object.fromEntries(kinds.map((k) => [k, { module: k }])),
      roots: { outbox: { path: "/tmp/outbox" } },
      ...extra,
    },
    { dir: "/tmp" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  const byModule = new Map(
    kinds.map((k, i) => [k, kindNamed(k, i === 0 ? "uncertain-window" : "exactly-once")]),
  );
  await loadKinds(r.config, { importModule: async (s) => ({ default: byModule.get(s) }) });
  return r.config;
}

describe("effectToolsOf", () => {
  it("names each kind's tool effect_<kind> with dots as _, and gives it the kind's schema without kind", async () => {
    const config = await configWith(["acme.ticket"]);
    const tools = effectToolsOf(kindsOf(config));
    expect(effectToolName("git.commit")).toBe("effect_git_commit");
    const ticket = tools.find((t) => t.kind === "acme.ticket");
    expect(ticket?.name).toBe("effect_acme_ticket");
    expect(ticket?.inputSchema.type).toBe("object");
    expect(JSON.stringify(ticket?.inputSchema)).not.toContain('"kind"');
    expect(JSON.stringify(ticket?.inputSchema)).toContain('"text"');
    expect(ticket?.description).toMatch(/^Does acme\.ticket\. Stages one acme\.ticket effect/);
    expect(ticket?.description).toContain("waits as uncertain for a person");
    const write = tools.find((t) => t.kind === "file.write");
    expect(write?.description).toContain("Configured here: root outbox.");
    expect(tools.every((t) => /^[A-Za-z0-9_-]{1,64}$/.test(t.name))).toBe(true);
  });

  it("never states more than the kind's own parts show: exactly once declared, a probe that cannot tell", async () => {
    const r = parseConfig({ kinds: { "acme.claim": { module: "acme.claim" } } }, { dir: "/tmp" });
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const claim = defineEffectKind({
      ...kindNamed("acme.claim", "exactly-once"),
      probeable: () => false,
      samples: { valid: (i) => ({ kind: "acme.claim", text: `t${i}` }), invalid: [] },
    });
    await loadKinds(r.config, { importModule: async () => ({ default: claim }) });
    const tool = effectToolsOf(kindsOf(r.config)).find((t) => t.kind === "acme.claim");
    expect(tool?.description).toContain("waits as uncertain for a person");
    expect(tool?.description).not.toContain("exactly once");
  });

  it("refuses two kinds whose tool names would be the same, naming both", async () => {
    const config = await configWith(["ab.c_d", "ab_c.d"]);
    expect(() => effectToolsOf(kindsOf(config))).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        message: expect.stringContaining("ab.c_d"),
      }),
    );
  });
});

describe("effectToolsOf and the config", () => {
  it("lists no tool for a kind whose known aliases the config leaves empty: every effect of it would be refused", async () => {
    const bare = await configWith(["acme.ticket"], { roots: {} });
    const names = effectToolsOf(kindsOf(bare)).map((t) => t.kind);
    // No root, repo, publish target or HTTP target: only the kind that names no aliases.
    expect(names).toEqual(["acme.ticket"]);
    const some = await configWith(["acme.ticket"], {
      publish: { events: { stream: "EVENTS", subjectPrefix: "idem.events" } },
      http: { targets: { hooks: { baseUrl: "https://hooks.example" } } },
    });
    expect(
      effectToolsOf(kindsOf(some))
        .map((t) => t.kind)
        .sort(),
    ).toEqual(["acme.ticket", "file.write", "http.request", "nats.publish"].sort());
  });
});
