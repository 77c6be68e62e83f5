// Issue 42: what the store hands back is distrusted. Recorded outputs are damaged at random, by
// bytes (a byte changed, the body cut) and by shape (JSON that is not an agent output, an effect
// that is not one, a spec without its fields, another job's output), on SQLite and on PostgreSQL;
// the interpreter then drains the journal. Every sound output is applied exactly once (a commit
// per key, a file with its content), every damaged one ends dead with class integrity and nothing
// of it reaches a target, and `outputs.damaged()` finds every damaged row the store can tell.
// IDEM_FUZZ_RUNS and IDEM_FUZZ_SEED vary the sample.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { openEffects } from "@idem/core";
import { effectTargetsOf } from "@idem/effects";
import { createInterpreter } from "@idem/interpreter";
import { openJournalStore } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { type AgentOutput, canonicalJson, journalLocationOf } from "@idem/schema";
import { startPostgres, tempDir } from "@idem/testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, trailerCounts } from "../chaos/interpreter-fixture.js";
import { DAMAGES, damageOutputRow } from "../support/damage-output.js";

const RUNS = Number(process.env.IDEM_FUZZ_RUNS ?? 3);
const SEED = Number(process.env.IDEM_FUZZ_SEED ?? 42);
const OUTPUTS = 16;

let pg: Awaited<ReturnType<typeof startPostgres>>;
let databases = 0;
beforeAll(async () => {
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

/** Output i: a commit on the repo (even) or a file in the outbox (odd), each its own. */
const outputOf = (i: number): AgentOutput => {
  const jobId = `f-${String(i).padStart(2, "0")}`;
  return {
    jobId,
    agent: "writer",
    effects: [
      i % 2 === 0
        ? {
            kind: "git.commit",
            repo: "site",
            message: jobId,
            files: [{ path: `${jobId}.txt`, content: `${jobId}\n` }],
          }
        : { kind: "file.write", root: "outbox", path: `${jobId}.txt`, content: `${jobId}\n` },
    ],
  };
};

/** One damage: the new body and whether the recorded hash is kept (bytes) or matched (a hand edit). */
type Damage = (body: string) => { body: string; hash: "kept" | "matching" };
const damage: fc.Arbitrary<{ name: string; make: Damage }> = fc.oneof(
  fc.record({ at: fc.nat(), byte: fc.integer({ min: 32, max: 126 }) }).map(({ at, byte }) => ({
    name: `byte ${byte} at ${at}`,
    make: (body: string) => {
      const i = at % body.length;
      return {
        body: body.slice(0, i) + String.fromCharCode(byte) + body.slice(i + 1),
        hash: "kept" as const,
      };
    },
  })),
  fc.nat().map((at) => ({
    name: `cut at ${at}`,
    make: (body: string) => ({ body: body.slice(0, at % body.length), hash: "kept" as const }),
  })),
  fc.constantFrom(
    { name: "null", make: () => ({ body: DAMAGES.null(), hash: "matching" as const }) },
    {
      name: "effects: [null]",
      make: (b: string) => ({ body: DAMAGES.nullEffect(b), hash: "matching" as const }),
    },
    {
      name: "bare spec",
      make: (b: string) => ({ body: DAMAGES.bareSpec(b), hash: "matching" as const }),
    },
    {
      name: "another job's output",
      make: (b: string) => ({
        body: b.replace(/"jobId":"f-(\d\d)"/, '"jobId":"x-$1"'),
        hash: "matching" as const,
      }),
    },
  ),
  fc.jsonValue().map((v) => ({
    name: `JSON ${JSON.stringify(v).slice(0, 40)}`,
    make: () => ({ body: JSON.stringify(v) ?? "null", hash: "matching" as const }),
  })),
);

/** Which outputs are damaged and how: a third of them or so, never none. */
const plans = fc
  .array(fc.option(damage, { freq: 2 }), { minLength: OUTPUTS, maxLength: OUTPUTS })
  .filter((p) => p.some((d) => d !== null));

async function trial(
  journal: { path: string } | { url: string },
  plan: ({ name: string; make: Damage } | null)[],
): Promise<void> {
  await using dir = await tempDir("idem-fuzz-damaged-");
  const ws = await createWorkspace(dir.path, { backoffMs: [10], maxAttempts: 2 }, { journal });
  const at = "url" in journal ? journal : { path: ws.config.journal.path };
  const outputs = Array.from({ length: OUTPUTS }, (_, i) => outputOf(i));
  const store = await openJournalStore(journalLocationOf(ws.config));
  const effects = openEffects(ws.config);
  try {
    for (const o of outputs)
      await store.outputs.record(o, { source: "test", targets: effectTargetsOf(o, ws.config) });
    const damaged = new Set<string>();
    for (const [i, d] of plan.entries()) {
      if (!d) continue;
      const o = outputs[i] as AgentOutput;
      const before = canonicalJson(o);
      const after = d.make(before);
      if (after.body === before) continue; // the same byte written back: nothing damaged
      await damageOutputRow(at, o.jobId, after.body, after.hash);
      damaged.add(o.jobId);
    }
    const why = (id: string) =>
      `${id}: ${plan[outputs.findIndex((o) => o.jobId === id)]?.name ?? "sound"}`;

    const drained = await createInterpreter({
      config: ws.config,
      journal: store,
      effects,
      logger: silentLogger(),
    }).drain();
    expect(drained.endedDead).toBe(damaged.size > 0);

    const commits = await trailerCounts(ws.repoPath);
    for (const [i, o] of outputs.entries()) {
      const run = await store.runs.latest(o.jobId);
      const file = join(i % 2 === 0 ? ws.repoPath : ws.outboxPath, `${o.jobId}.txt`);
      if (damaged.has(o.jobId)) {
        expect(run?.state, why(o.jobId)).toBe("dead");
        expect(run?.class, why(o.jobId)).toBe("integrity");
        expect(commits.get(`${o.jobId}/0`), why(o.jobId)).toBeUndefined();
        expect(existsSync(file), why(o.jobId)).toBe(false);
      } else {
        expect(run?.state, why(o.jobId)).toBe("done");
        if (i % 2 === 0) expect(commits.get(`${o.jobId}/0`), o.jobId).toBe(1);
        expect(readFileSync(file, "utf8"), o.jobId).toBe(`${o.jobId}\n`);
      }
    }
    // What the store itself can tell (all but a spec its kind's schema refuses) it lists.
    const found = new Set((await store.outputs.damaged()).map((d) => d.jobId));
    for (const id of found) expect(damaged.has(id), id).toBe(true);
    for (const id of damaged)
      if (!/bare spec/.test(why(id))) expect(found.has(id), why(id)).toBe(true);
  } finally {
    await effects.close();
    await store.close();
  }
}

describe("fuzzing damaged journal rows (issue 42)", () => {
  it(`applies every sound output once beside ${RUNS} random sets of damaged rows, on SQLite`, async () => {
    await fc.assert(
      fc.asyncProperty(plans, (plan) => trial({ path: ".idem/journal.db" }, plan)),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it(`applies every sound output once beside ${RUNS} random sets of damaged rows, on PostgreSQL`, async () => {
    await fc.assert(
      fc.asyncProperty(plans, async (plan) =>
        trial({ url: await pg.createDatabase(`fuzz_damaged_${++databases}`) }, plan),
      ),
      { numRuns: RUNS, seed: SEED + 1 },
    );
  });
});
