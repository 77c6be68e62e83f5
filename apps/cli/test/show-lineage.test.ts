import { afterEach, describe, expect, it } from "vitest";
import { commitSpec, type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem } from "./ops-helpers.js";

// Each replayed generation records who, why, the selection, the effect filter and the generation
// it replays; `idem show` (human and --json) shows that lineage.

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

interface Shown {
  runs: { generation: number; state: string; only: unknown; replay: unknown }[];
  lineage: {
    generation: number;
    replaysGeneration: number;
    actor: string;
    reason: string | null;
    selection: Record<string, unknown>;
    only: Record<string, string[]> | null;
    at: number;
  }[];
  events: { type: string; actor: string; data: Record<string, unknown> | null }[];
}

describe("idem show: a replay's lineage", () => {
  it("lists every replayed generation with its actor, reason, selection, filter and the generation it replays", async () => {
    fx = await opsFixture();
    const cfg = ["--config", fx.ws.config];
    await fx.record("job-1", [
      commitSpec("a.txt", "a\n"),
      { kind: "file.write", root: "outbox", path: "o.txt", content: "o\n" },
    ]);
    await fx.record("job-2", [
      { kind: "file.write", root: "outbox", path: "p.txt", content: "p\n" },
    ]);
    expect((await fx.interpret()).runs.done).toBe(2);
    gitIn(fx.repoDir, "reset", "-q", "--hard", "HEAD~1");

    const reason = `site restored from last night's "backup" (INC-42)`;
    const first = await idem([
      "replay",
      "--agent",
      "writer",
      "--repo",
      "site",
      "--reason",
      reason,
      "--actor",
      "alice",
      "--yes",
      "--now",
      "--json",
      ...cfg,
    ]);
    expect(first.code, first.stderr).toBe(0);
    // job-2 has no effect on repo site: no new generation for it, said so in the plan.
    expect(JSON.parse(first.stdout)).toMatchObject({
      untouched: ["job-2"],
      created: [{ jobId: "job-1", generation: 2, replaysGeneration: 1 }],
      lineage: {
        actor: "alice",
        reason,
        selection: { agent: "writer" },
        only: { repos: ["site"] },
      },
    });
    expect((await fx.journal.runs.forJob("job-2")).map((r) => r.generation)).toEqual([1]);

    const second = await idem(
      ["replay", "--job", "job-1", "--reason", "check everything", "--yes", ...cfg],
      { env: { IDEM_ACTOR: "bob" } },
    );
    expect(second.code, second.stderr).toBe(0);

    const shown = await idem(["show", "job-1", "--json", ...cfg]);
    expect(shown.code, shown.stderr).toBe(0);
    const view = JSON.parse(shown.stdout) as Shown;
    expect(view.lineage.map(({ at: _at, ...l }) => l)).toEqual([
      {
        generation: 2,
        replaysGeneration: 1,
        actor: "alice",
        reason,
        selection: { agent: "writer" },
        only: { repos: ["site"] },
      },
      {
        generation: 3,
        replaysGeneration: 2,
        actor: "bob",
        reason: "check everything",
        selection: { jobIds: ["job-1"] },
        only: null,
      },
    ]);
    expect(view.runs.map((r) => [r.generation, r.state, r.only])).toEqual([
      [1, "done", null],
      [2, "done", { repos: ["site"] }],
      [3, "pending", null],
    ]);
    expect(view.runs[0]?.replay).toBeNull();
    const replayed = view.events.filter((e) => e.type === "run.replayed");
    expect(replayed.map((e) => [e.actor, e.data?.reason, e.data?.replaysGeneration])).toEqual([
      ["alice", reason, 1],
      ["bob", "check everything", 2],
    ]);

    const human = await idem(["show", "job-1", "--wide", ...cfg]);
    expect(human.code, human.stderr).toBe(0);
    const section = human.stdout.slice(human.stdout.indexOf("lineage\n"));
    expect(section).toContain(reason);
    expect(section).toContain("alice");
    expect(section).toContain("--agent writer");
    expect(section).toContain("repo site");
    expect(section).toContain("every effect");
    expect(human.stdout).toContain("only repo site");

    // An output never replayed shows no lineage.
    const plain = JSON.parse((await idem(["show", "job-2", "--json", ...cfg])).stdout) as Shown;
    expect(plain.lineage).toEqual([]);
    expect((await idem(["show", "job-2", ...cfg])).stdout).not.toContain("lineage\n");
  });
});
