import { execFileSync } from "node:child_process";
import { readdirSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { openEffects } from "@idem/core";
import { createInterpreter } from "@idem/interpreter";
import { createLogger } from "@idem/runtime";
import { effectKey } from "@idem/schema";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildForTest, git, sleep, trailerCounts } from "../chaos/interpreter-fixture.js";
import { commits, type Incident, incident } from "./incident.js";
import { shell, typed } from "./runbook.js";

// docs/runbook.md, "After a power loss", with git effects not fsynced (`durable: false`, an
// embedder's choice): the power goes out after the last commits' objects, files and index were
// written but not flushed, so they come back empty under their names while the branch and the
// ledger say applied. The documented steps (doctor, move the branch back, reset the index, drop the
// key index, replay) end with every key once and a repository `git fsck` passes: the replay never
// reuses an object the crash left empty.

const SECTION = "After a power loss";
let fx: Incident | undefined;
beforeAll(() => buildForTest("apps/cli"));
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** Every file under `dir` modified at or after `since` (ms), recursively. */
function writtenSince(dir: string, since: number): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...writtenSince(p, since));
    else if (e.isFile() && statSync(p).mtimeMs >= since) out.push(p);
  }
  return out;
}

describe("a power loss with durable: false, the runbook's way", () => {
  it("finds the damage, moves the branch back and replays the lost commits once, into a repository git fsck passes", async () => {
    fx = await incident();
    const repo = fx.ws.repoPath;
    const cwd = fx.dir;
    const journal = await fx.journal();
    const effects = openEffects(fx.ws.config, { durable: false });
    const interpret = () =>
      createInterpreter({
        config: fx?.ws.config as NonNullable<typeof fx>["ws"]["config"],
        journal,
        effects,
        logger: createLogger({ name: "idem-interpreter", level: "silent" }),
      }).drain();
    const kept = ["pl-1", "pl-2", "pl-3"].map((id) => commits(id));
    const lost = ["pl-4", "pl-5", "pl-6"].map((id) => commits(id));
    await fx.record(kept);
    await interpret();
    // The power loss: what was written from here on was never flushed.
    await sleep(20);
    const cut = Date.now();
    await sleep(20);
    await fx.record(lost);
    await interpret();
    await effects.close();
    await fx.closeJournal();
    const gitDir = join(repo, ".git");
    const emptied = [
      ...writtenSince(join(gitDir, "objects"), cut),
      join(gitDir, "index"),
      ...readdirSync(repo)
        .filter((f) => f.startsWith("pl-"))
        .map((f) => join(repo, f))
        .filter((f) => statSync(f).mtimeMs >= cut),
    ];
    expect(emptied.length).toBeGreaterThan(6);
    for (const f of emptied) truncateSync(f, 0);
    expect(() => execFileSync("git", ["-C", repo, "fsck"], { stdio: "pipe" })).toThrow();

    // 1. doctor names the damage and the last whole commit.
    const doctor = await shell(`${typed(SECTION, /^idem doctor\b/)} --json`, { cwd });
    expect(doctor.code).toBe(3);
    const findings = JSON.parse(doctor.stdout).findings as { key: string; finding: string }[];
    const branch = findings.find((f) => f.key === "repos.site.branch");
    const sha = /last whole commit is ([0-9a-f]{40})/.exec(branch?.finding ?? "")?.[1];
    expect(sha, JSON.stringify(findings)).toBeDefined();
    expect(findings.some((f) => f.key === "repos.site" && f.finding.includes("index"))).toBe(true);
    const vars = { REPO: repo, BRANCH: "main", SHA: sha as string };
    for (const command of [
      typed(SECTION, /^git -C REPO update-ref refs\/heads\/BRANCH SHA/),
      typed(SECTION, /rm -f "\$d\/index"/),
      typed(SECTION, /-empty -delete/),
    ]) {
      const r = await shell(command, { cwd, vars });
      expect(r.code, `${r.command}: ${r.stderr}`).toBe(0);
    }
    const untracked = (await git(repo, "status", "--porcelain", "--untracked-files=all"))
      .split("\n")
      .filter((l) => l.startsWith("?? "))
      .map((l) => l.slice(3));
    expect(untracked.every((p) => p.startsWith("pl-"))).toBe(true);
    if (untracked.length > 0) {
      const clean = await shell("git -C REPO clean -f -- PATHS", {
        cwd,
        vars: { ...vars, PATHS: untracked.join(" ") },
      });
      expect(clean.code, clean.stderr).toBe(0);
    }
    // 2. The key index, from the config's folder as the runbook says.
    for (const command of [
      typed(SECTION, /for-each-ref --format='delete/),
      typed(SECTION, /rm -rf /),
      typed(SECTION, /reflog expire --stale-fix/),
    ]) {
      const r = await shell(command, { cwd, vars });
      expect(r.code, `${r.command}: ${r.stderr}`).toBe(0);
    }
    expect(await git(repo, "for-each-ref", "refs/idem/b/main/")).toBe("");
    const healthy = await shell(`${typed(SECTION, /^idem doctor\b/)} --json`, { cwd });
    expect(healthy.code, healthy.stdout).toBe(0);

    // 3. The replay, the audit and git fsck.
    const plan = await shell(`${typed(SECTION, /^idem replay --all --dry-run/)} --json`, { cwd });
    const actions = JSON.parse(plan.stdout).plan as { key: string; action: string }[];
    expect(
      actions
        .filter((a) => a.action === "apply")
        .map((a) => a.key)
        .sort(),
    ).toEqual(lost.map((o) => effectKey(o.jobId, 0)).sort());
    const replay = await shell(typed(SECTION, /^idem replay --all --yes --now/), { cwd });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    const audit = await shell(typed(SECTION, /^idem audit\b/), { cwd });
    expect(audit.code, audit.stdout).toBe(0);
    const fsck = await shell(typed(SECTION, /^git -C REPO fsck/), { cwd, vars });
    expect(fsck.code, fsck.stderr).toBe(0);
    const counts = await trailerCounts(repo);
    for (const o of [...kept, ...lost]) expect(counts.get(effectKey(o.jobId, 0))).toBe(1);
  });
});
