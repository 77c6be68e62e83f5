import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EFFECT_TRAILER, effectKey } from "@idem/schema";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildForTest, CLEAN, git, trailerCounts, verify } from "../chaos/interpreter-fixture.js";
import { commits, type Incident, incident } from "./incident.js";
import { shell, typed } from "./runbook.js";

// docs/runbook.md, "Duplicates and drift in the audit" and "A repository was restored from a
// backup": a hand-made commit carrying an idem key is taken back with the documented `git revert`
// and the audit is clean; a disk restored from a backup (the repository and the files idem wrote)
// is brought back by the one documented replay, every key once and no file drift.

let fx: Incident | undefined;
beforeAll(() => buildForTest("apps/cli"));
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const interpretOnce = async (f: Incident) => {
  expect(await f.start(["interpreter", "--once"]).exited).toBe(0);
};

describe("repository incidents, the runbook's way", () => {
  it("clears a duplicate key with the documented git revert", async () => {
    fx = await incident();
    const cwd = fx.dir;
    const repo = fx.ws.repoPath;
    await fx.record([commits("dup")]);
    await interpretOnce(fx);
    // Someone's hand-made commit carries idem's key too.
    writeFileSync(join(repo, "hand.txt"), "by hand\n");
    await git(repo, "add", "hand.txt");
    await git(repo, "commit", "-q", "-m", `by hand\n\n${EFFECT_TRAILER}: ${effectKey("dup", 0)}`);
    const copy = (await git(repo, "rev-parse", "HEAD")).trim();

    const section = "Duplicates and drift in the audit";
    const before = await shell("idem audit --json", { cwd });
    expect(before.code).toBe(3);
    const dup = JSON.parse(before.stdout).duplicates[0];
    expect(dup).toMatchObject({ key: effectKey("dup", 0), count: 2 });
    expect(dup.commits).toContain(copy);
    const revert = await shell(typed(section, /^git -C REPO revert/), {
      cwd,
      vars: { REPO: repo, SHA: copy },
    });
    expect(revert.code, revert.stderr).toBe(0);
    const after = await shell(typed(section, /^idem audit\b/), { cwd });
    expect(after.code, after.stdout).toBe(0);
    expect((await trailerCounts(repo)).get(effectKey("dup", 0))).toBe(2); // history keeps both
  });

  it("brings back a disk restored from a backup (commits and files) with the one documented replay", async () => {
    fx = await incident();
    const cwd = fx.dir;
    const repo = fx.ws.repoPath;
    const output = (id: string) => ({
      ...commits(id),
      effects: [
        ...commits(id).effects,
        { kind: "file.write" as const, root: "outbox", path: `${id}.txt`, content: `${id}\n` },
      ],
    });
    const early = ["r-1", "r-2"].map(output);
    const late = ["r-3", "r-4"].map(output);
    await fx.record(early);
    await interpretOnce(fx);
    // The backup: the repository and the outbox as they are now.
    const backup = join(cwd, "backup");
    cpSync(repo, join(backup, "site"), { recursive: true });
    cpSync(fx.ws.outboxPath, join(backup, "outbox"), { recursive: true });
    await fx.record(late);
    await interpretOnce(fx);
    // The disk is restored from it.
    for (const [from, to] of [
      ["site", repo],
      ["outbox", fx.ws.outboxPath],
    ] as const) {
      rmSync(to, { recursive: true, force: true });
      cpSync(join(backup, from), to, { recursive: true });
    }
    const section = "A repository was restored from a backup (commits lost)";
    const drift = await shell(`${typed(section, /^idem audit\b/)} --json`, { cwd });
    expect(drift.code).toBe(3);
    expect(JSON.parse(drift.stdout).drift.length).toBe(4);
    const plan = await shell(`${typed(section, /^idem replay --all --dry-run/)} --json`, { cwd });
    expect(plan.code, plan.stderr).toBe(0);
    const replay = await shell(typed(section, /^idem replay --all --yes --now/), { cwd });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    const audit = await shell(typed(section, /^idem audit\b/), { cwd });
    expect(audit.code, audit.stdout).toBe(0);
    expect(await verify(fx.ws, await fx.journal(), [...early, ...late])).toEqual(CLEAN);
    for (const id of ["r-1", "r-4"])
      expect(readFileSync(join(fx.ws.outboxPath, `${id}.txt`), "utf8")).toBe(`${id}\n`);
  });
});
