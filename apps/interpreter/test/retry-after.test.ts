import { loadKinds, openEffects, recordOutput } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { absent, defineEffectKind, fail } from "@idem/kit";
import { parseConfig } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createInterpreter } from "../src/index.js";

/** A kind whose target always answers a rate limit that resets in ten minutes. */
const limited = defineEffectKind({
  name: "test.limited",
  description: "Always rate limited.",
  guarantee: "exactly-once-in-effect",
  spec: z.strictObject({ kind: z.literal("test.limited") }),
  probe: async () => {
    throw fail.transient("rate limited", { retryAfterMs: 600_000 });
  },
  apply: async () => ({}),
});
const reachable = defineEffectKind({
  name: "test.reachable",
  description: "Always reachable.",
  guarantee: "exactly-once-in-effect",
  spec: z.strictObject({ kind: z.literal("test.reachable") }),
  probe: async () => absent(),
  apply: async () => ({}),
});

describe("a target that says when to come back", () => {
  it("is asked again no sooner than its Retry-After, not after the short backoff", async () => {
    await using dir = await tempDir("idem-retry-after-");
    const parsed = parseConfig(
      {
        journal: { path: "journal.db" },
        interpreter: { backoffMs: [1_000], maxAttempts: 5 },
        kinds: {
          "test.limited": { module: "./limited.mjs" },
          "test.reachable": { module: "./r.mjs" },
        },
      },
      { dir: dir.path },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const config = parsed.config;
    const kinds = await loadKinds(config, {
      importModule: async (s) => ({ default: s.endsWith("limited.mjs") ? limited : reachable }),
    });
    const journal = await openSqliteJournal(config.journal.path);
    const effects = openEffects(config, { kinds });
    try {
      for (const [jobId, kind] of [
        ["j-limited", "test.limited"],
        ["j-plain", "test.reachable"],
      ] as const) {
        const r = await recordOutput({
          journal,
          config,
          kinds,
          output: { jobId, agent: "a", effects: [{ kind }] },
          source: "cli",
        });
        expect(r.status).toBe("recorded");
      }
      const interpreter = createInterpreter({
        config,
        journal,
        effects,
        logger: pino({ level: "silent" }),
      });
      const before = Date.now();
      const outcomes = [await interpreter.runOnce(), await interpreter.runOnce()];
      expect(outcomes.map((o) => o?.outcome).sort()).toEqual(["done", "failed"]);
      const run = await journal.runs.latest("j-limited");
      expect(run?.state).toBe("failed");
      expect(run?.nextAt ?? 0).toBeGreaterThanOrEqual(before + 600_000);
    } finally {
      await effects.close();
      await journal.close();
    }
  });
});
