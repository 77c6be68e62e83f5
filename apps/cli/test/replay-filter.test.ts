import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { EffectSpec } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem, initRepo } from "./ops-helpers.js";
import { type Receiver, startReceiver } from "./replay-receiver.js";

// Replay by what was hit (issue 22): after an incident, only the effects of one kind or at one
// target are decided, probed and applied again; the others of the same outputs stay as they were.
// Real git repos, real files, a real HTTP receiver on loopback, the real CLI.

let fx: OpsFixture | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await fx?.close();
  await rx?.close();
  fx = undefined;
  rx = undefined;
});

/** One output hitting two repos, two roots and two webhook targets: effect i is `job-1/i`. */
const EFFECTS: EffectSpec[] = [
  { kind: "git.commit", repo: "site", message: "site", files: [{ path: "a.txt", content: "a\n" }] },
  { kind: "git.commit", repo: "docs", message: "docs", files: [{ path: "d.txt", content: "d\n" }] },
  { kind: "file.write", root: "outbox", path: "o.txt", content: "o\n" },
  { kind: "file.write", root: "archive", path: "r.txt", content: "r\n" },
  { kind: "http.request", target: "hooks", method: "POST", path: "/deploy", body: { n: 1 } },
  { kind: "http.request", target: "audit", method: "POST", path: "/log", body: { n: 2 } },
];
const KEYS = EFFECTS.map((_, i) => `job-1/${i}`);

interface Incident {
  f: OpsFixture;
  r: Receiver;
  cfg: string[];
  docsDir: string;
  archiveDir: string;
  /** Which of the six effects are at their targets now. */
  present(): boolean[];
}

/** Records and applies the output, then loses every effect: repos reset, files gone, receiver empty. */
async function incident(): Promise<Incident> {
  rx = await startReceiver();
  const r = rx;
  fx = await opsFixture({
    repos: { site: { path: "repos/site" }, docs: { path: "repos/docs" } },
    roots: { outbox: { path: "outbox" }, archive: { path: "archive" } },
    http: { targets: r.targets() },
    // A killed interpreter's run is taken over once its lease ends.
    interpreter: { pollMs: 20, backoffMs: [20], leaseMs: 5_000 },
  });
  const f = fx;
  const docsDir = join(f.ws.dir, "repos/docs");
  const archiveDir = join(f.ws.dir, "archive");
  initRepo(docsDir);
  mkdirSync(archiveDir);
  await f.record("job-1", EFFECTS);
  expect((await f.interpret()).runs.done).toBe(1);
  const applied = await f.journal.ledger.forJob("job-1", 1);
  expect(applied.map((e) => e.state)).toEqual(Array(6).fill("applied"));
  gitIn(f.repoDir, "reset", "-q", "--hard", "HEAD~1");
  gitIn(docsDir, "reset", "-q", "--hard", "HEAD~1");
  rmSync(join(f.rootDir, "o.txt"));
  rmSync(join(archiveDir, "r.txt"));
  r.lose();
  r.posts.clear();
  r.probes.clear();
  const onBranch = (dir: string, key: string) =>
    gitIn(dir, "log", "--format=%B", "main").split("\n").includes(`Idem-Effect: ${key}`);
  return {
    f,
    r,
    cfg: ["--config", f.ws.config],
    docsDir,
    archiveDir,
    present: () => [
      onBranch(f.repoDir, KEYS[0] as string),
      onBranch(docsDir, KEYS[1] as string),
      existsSync(join(f.rootDir, "o.txt")),
      existsSync(join(archiveDir, "r.txt")),
      r.kept().includes(`hooks:${KEYS[4]}`),
      r.kept().includes(`audit:${KEYS[5]}`),
    ],
  };
}

interface PlanJson {
  plan: { key: string; action: string; generation: number }[];
  summary: Record<string, number>;
  only: Record<string, string[]> | null;
  kept: { key: string; action: string; state: string; stateGeneration: number }[];
  untouched: string[];
  created?: { jobId: string; generation: number; replaysGeneration: number }[];
}

/** Selector, its flags, the effects it takes, the run's filter and the run's ordering targets. */
const SELECTORS: [string, string[], number[], Record<string, string[]>, string[]][] = [
  ["kind", ["--kind", "http.request"], [4, 5], { kinds: ["http.request"] }, []],
  ["repo", ["--repo", "site"], [0], { repos: ["site"] }, ["repo:site@main"]],
  ["root", ["--root", "outbox"], [2], { roots: ["outbox"] }, ["root:outbox"]],
  ["target", ["--target", "hooks"], [4], { targets: ["hooks"] }, []],
];

describe("idem replay by what was hit", () => {
  it.each(SELECTORS)(
    "--%s: plans, probes and applies only those effects; the others stay lost, unprobed, with no ledger row",
    async (_name, flags, inside, only, targets) => {
      const { f, r, cfg, docsDir, present } = await incident();
      expect(present()).toEqual(Array(6).fill(false));

      const dry = await idem(["replay", "--job", "job-1", ...flags, "--dry-run", "--json", ...cfg]);
      expect(dry.code, dry.stderr).toBe(0);
      const plan = JSON.parse(dry.stdout) as PlanJson;
      const outside = KEYS.filter((_, i) => !inside.includes(i));
      expect(plan.only).toEqual(only);
      expect(plan.plan.map((e) => [e.key, e.action])).toEqual(
        inside.map((i) => [KEYS[i], "apply"]),
      );
      expect(plan.kept.map((e) => [e.key, e.action, e.state, e.stateGeneration])).toEqual(
        outside.map((k) => [k, "keep", "applied", 1]),
      );
      // The dry run probed the webhooks inside the filter only.
      const probedHttp = [...r.probes.keys()].sort();
      expect(probedHttp).toEqual(
        [4, 5]
          .filter((i) => inside.includes(i))
          .map((i) => `${i === 4 ? "hooks" : "audit"}:${KEYS[i]}`)
          .sort(),
      );
      const human = await idem(["replay", "--job", "job-1", ...flags, "--dry-run", ...cfg]);
      expect(human.stdout).toContain(
        `${outside.length} other effect(s) of these outputs left as they were`,
      );
      expect(human.stdout).toMatch(/keep/);

      // A repo outside the filter is moved away: any probe or apply of it would fail the run.
      const away = `${docsDir}.away`;
      if (!inside.includes(1)) renameSync(docsDir, away);
      r.probes.clear();
      const run = await idem(
        [
          "replay",
          "--job",
          "job-1",
          ...flags,
          "--reason",
          "restore what was hit",
          "--yes",
          "--now",
          "--json",
          ...cfg,
        ],
        { env: { IDEM_ACTOR: "oncall" } },
      );
      expect(run.code, run.stderr).toBe(0);
      if (!inside.includes(1)) renameSync(away, docsDir);
      expect(present()).toEqual(KEYS.map((_, i) => inside.includes(i)));
      const created = (JSON.parse(run.stdout) as PlanJson).created;
      expect(created).toEqual([{ jobId: "job-1", generation: 2, replaysGeneration: 1 }]);

      const runs = await f.journal.runs.forJob("job-1");
      expect(runs.map((x) => [x.generation, x.state, x.only])).toEqual([
        [1, "done", null],
        [2, "done", only],
      ]);
      // It ordered only on the targets of the effects it took.
      expect(runs[1]?.targets).toEqual(targets);
      // Generation 2 wrote ledger rows for the effects inside only.
      expect((await f.journal.ledger.forJob("job-1", 2)).map((e) => [e.key, e.state])).toEqual(
        inside.map((i) => [KEYS[i], "applied"]),
      );
      // Webhooks outside were neither probed nor posted again.
      for (const [i, t] of [
        [4, "hooks"],
        [5, "audit"],
      ] as const) {
        const id = `${t}:${KEYS[i]}`;
        expect(r.posts.get(id) ?? 0, id).toBe(inside.includes(i) ? 1 : 0);
        if (!inside.includes(i)) expect(r.probes.get(id) ?? 0, id).toBe(0);
      }
    },
  );

  it("a filtered replay goes on where it stopped after the interpreter is killed: the run record carries the filter", async () => {
    const { f, r, cfg, present } = await incident();
    const made = await idem(
      ["replay", "--all", "--kind", "http.request", "--reason", "hooks lost", "--yes", ...cfg],
      { env: { IDEM_ACTOR: "oncall" } },
    );
    expect(made.code, made.stderr).toBe(0);
    // The first interpreter kills itself after the first intent of the run (job-1/4, inside).
    const killed = await idem(["interpreter", "--once", ...cfg], {
      env: { IDEM_FAULT: "interpreter.after-intent" },
    });
    expect(killed.code).not.toBe(0);
    expect((await f.journal.ledger.forJob("job-1", 2)).map((e) => [e.key, e.state])).toEqual([
      [KEYS[4], "intended"],
    ]);
    // Another interpreter process, knowing nothing but the journal, takes the run over.
    const next = await idem(["interpreter", "--once", ...cfg], { timeoutMs: 180_000 });
    expect(next.code, next.stderr).toBe(0);
    expect(present()).toEqual([false, false, false, false, true, true]);
    const run = await f.journal.runs.latest("job-1");
    expect(run).toMatchObject({
      generation: 2,
      state: "done",
      only: { kinds: ["http.request"] },
      replay: { actor: "oncall", reason: "hooks lost", replaysGeneration: 1 },
    });
    expect(run?.leaseExpiries).toBeGreaterThanOrEqual(1);
    expect((await f.journal.ledger.forJob("job-1", 2)).map((e) => e.key)).toEqual([
      KEYS[4],
      KEYS[5],
    ]);
    // Each webhook kept once at the receiver.
    expect(r.kept()).toEqual([`audit:${KEYS[5]}`, `hooks:${KEYS[4]}`]);
  });
});
