// A job's draft in process, on disk (FileDraftStore, as `idem mcp` keeps it) and in memory (the
// executor's run): each effect checked as a record checks it, a draft shared by every session of
// the job's attempt and outliving them, a new attempt that starts empty and fences the old one
// off, an empty finish refused unless asked, and two stores changing one draft at once losing
// nothing.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kindsOf, loadKinds } from "@idem/core";
import { defineEffectKind } from "@idem/kit";
import { draftFolderName, FileDraftStore, JobDraft, MemoryDraftStore } from "@idem/mcp";
import { type Config, parseConfig } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const ticket = defineEffectKind({
  name: "acme.ticket",
  description: "Opens a ticket.",
  guarantee: "exactly-once",
  spec: z.union([
    z.strictObject({ kind: z.literal("acme.ticket"), text: z.string().min(1) }),
    z.strictObject({ kind: z.literal("acme.ticket"), count: z.number().int() }),
  ]),
  probe: async () => ({ status: "absent", detail: {} }),
  apply: async () => ({}),
});

async function config(extra: Record<string, unknown> = {}): Promise<Config> {
  const r = parseConfig(
    { kinds: { "acme.ticket": { module: "acme" } }, ...extra },
    { dir: "/tmp" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  await loadKinds(r.config, { importModule: async () => ({ default: ticket }) });
  return r.config;
}

const job = { jobId: "Job-1", agent: "writer" };
const note = (text: string) => ({ kind: "acme.ticket", text });

describe("JobDraft", () => {
  it("checks each effect as a record would, the output's limits included, and stages nothing it refuses", async () => {
    const c = await config({ limits: { maxEffects: 2 } });
    const draft = await JobDraft.join(new MemoryDraftStore(), job, c, kindsOf(c));
    expect(await draft.stage({ kind: "acme.ticket", text: "" })).toMatchObject({ ok: false });
    expect(await draft.stage(note("a"))).toMatchObject({ ok: true, key: "Job-1/0", staged: 1 });
    expect(await draft.stage({ kind: "acme.ticket", count: 2 })).toMatchObject({
      ok: true,
      key: "Job-1/1",
    });
    expect(await draft.stage({ kind: "acme.ticket", count: 3 })).toEqual({
      ok: false,
      code: "INVALID_INPUT",
      issues: [{ path: "effects", field: "", message: "has 3 effects; limits.maxEffects is 2" }],
    });
    expect((await draft.view()).effects).toHaveLength(2);
    expect((await draft.finish("done", false)).status).toBe("first");
    expect((await draft.finish("done", false)).status).toBe("same");
    expect(await draft.finish("other", false)).toMatchObject({
      status: "other",
      output: { summary: "other" },
    });
    expect((await draft.output()).summary).toBe("done");
    expect(await draft.stage(note("late"))).toMatchObject({ ok: false, code: "INVALID_STATE" });
  });

  it("refuses to finish an empty draft unless allowEmpty says it is meant, and stays open after the refusal", async () => {
    const c = await config();
    const draft = await JobDraft.join(new MemoryDraftStore(), job, c, kindsOf(c));
    expect(await draft.finish("nothing", false)).toMatchObject({ status: "empty" });
    expect((await draft.view()).finished).toBe(false);
    expect(await draft.finish("nothing", true)).toMatchObject({
      status: "first",
      output: { effects: [] },
    });
  });

  it("on disk: a later session (another process, a restarted server) resumes what an earlier one staged", async () => {
    await using dir = await tempDir("idem-draft-");
    const c = await config();
    const first = await JobDraft.join(new FileDraftStore(dir.path), job, c, kindsOf(c));
    await first.stage(note("one"));
    // A store of its own, as another process has: nothing shared but the folder.
    const later = await JobDraft.join(new FileDraftStore(dir.path), job, c, kindsOf(c));
    expect(later.attempt).toBe(1);
    expect(await later.stage(note("two"))).toMatchObject({ ok: true, key: "Job-1/1" });
    expect(await later.finish("both", false)).toMatchObject({
      status: "first",
      output: { effects: [note("one"), note("two")] },
    });
    // One folder per job, named so that no two job IDs meet on a case-insensitive file system.
    expect(readdirSync(dir.path)).toEqual([draftFolderName("Job-1")]);
    expect(draftFolderName("Job-1")).not.toBe(draftFolderName("job-1"));
    // Every change a version; the older ones emptied, their names kept (never taken again).
    const folder = join(dir.path, draftFolderName("Job-1"));
    const files = readdirSync(folder).sort();
    expect(files).toEqual(["000000000001.json", "000000000002.json", "000000000003.json"]);
    expect(files.map((f) => statSync(join(folder, f)).size > 0)).toEqual([false, false, true]);
  });

  it("on disk: a new attempt starts empty, the old attempt's sessions are refused, and its name is never taken again", async () => {
    await using dir = await tempDir("idem-draft-attempt-");
    const c = await config();
    const join1 = (attempt?: string) =>
      JobDraft.join(new FileDraftStore(dir.path), job, c, kindsOf(c), attempt);
    const run1 = await join1("run-1");
    await run1.stage(note("a"));
    await run1.stage(note("b"));
    // The same run reconnecting, named or not, resumes.
    expect((await (await join1("run-1")).view()).effects).toHaveLength(2);
    const unnamed = await join1();
    expect(unnamed.attempt).toBe(1);
    // The agent run again from the start: a new attempt, its draft empty.
    const run2 = await join1("run-2");
    expect(run2.attempt).toBe(2);
    expect((await run2.view()).effects).toEqual([]);
    await run2.stage(note("a"));
    await run2.stage(note("b"));
    // What the old run's sessions still do is refused, not added to the new run's draft.
    expect(await run1.stage(note("c"))).toMatchObject({ ok: false, code: "INVALID_STATE" });
    expect(await unnamed.finish("old", false)).toMatchObject({ status: "superseded" });
    await expect(join1("run-1")).rejects.toMatchObject({ code: "INVALID_STATE" });
    expect(await run2.finish("again", false)).toMatchObject({
      status: "first",
      output: { effects: [note("a"), note("b")] },
    });
    await expect(join1("../x")).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("on disk: two stores staging into one draft at once both land, each at its own index (ten rounds)", async () => {
    const c = await config();
    for (let round = 0; round < 10; round++) {
      await using dir = await tempDir("idem-draft-race-");
      const a = await JobDraft.join(new FileDraftStore(dir.path), job, c, kindsOf(c));
      const b = await JobDraft.join(new FileDraftStore(dir.path), job, c, kindsOf(c));
      const staged = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).stage(note(`n${i}`))),
      );
      const keys = staged.map((s) => (s.ok ? s.key : JSON.stringify(s)));
      expect(new Set(keys).size, `round ${round}: ${keys}`).toBe(10);
      expect((await a.view()).effects.map((e) => e.text).sort()).toEqual(
        Array.from({ length: 10 }, (_, i) => `n${i}`).sort(),
      );
    }
  });

  it("on disk: a draft file that is not this job's draft is refused (INTEGRITY), never staged from", async () => {
    await using dir = await tempDir("idem-draft-bad-");
    const c = await config();
    const draft = await JobDraft.join(new FileDraftStore(dir.path), job, c, kindsOf(c));
    await draft.stage(note("a"));
    const folder = join(dir.path, draftFolderName("Job-1"));
    const file = readdirSync(folder).sort().at(-1);
    const path = join(folder, file as string);
    const state = JSON.parse(readFileSync(path, "utf8"));
    writeFileSync(path, JSON.stringify({ ...state, jobId: "other" }));
    await expect(draft.stage(note("b"))).rejects.toMatchObject({ code: "INTEGRITY" });
  });
});
