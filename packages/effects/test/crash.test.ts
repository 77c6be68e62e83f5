import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addRepo, commitsWithKey, git, type Sandbox, sandbox } from "./helpers.js";

const WORKER = join(import.meta.dirname, "fixtures", "crash-worker.mjs");
// The work a worker starts with; a round that finishes it before its kill comes adds as much again,
// so the kills keep landing mid-work however fast effects get.
const KEYS_STEP = 300;

function lockFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...lockFiles(p));
    else if (e.name.endsWith(".lock") && !p.endsWith(join("idem", "lock"))) out.push(p);
  }
  return out;
}

function run(repo: string, keys: number): ChildProcess {
  return spawn(process.execPath, [WORKER, repo, String(keys)], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

describe("git effects survive SIGKILL of the whole process group at random moments", () => {
  let sb: Sandbox;
  let repo: string;
  beforeAll(() => {
    execFileSync("npx", ["tsc", "-b", "packages/effects"], {
      cwd: join(import.meta.dirname, "../../.."),
      stdio: "ignore",
    });
    sb = sandbox();
    repo = addRepo(sb, "site");
  });
  afterAll(() => sb?.cleanup());

  it("leaves a usable repo, no stray locks, and each key present at most once", async () => {
    let kills = 0;
    let keys = KEYS_STEP;
    for (let round = 0; round < 400 && kills < 12; round++) {
      const child = run(repo, keys);
      const exited = new Promise<void>((r) => child.on("exit", () => r()));
      await new Promise((r) => setTimeout(r, 150 + Math.floor(Math.random() * 600)));
      if (child.exitCode === null) {
        process.kill(-(child.pid as number), "SIGKILL");
        kills += 1;
      } else {
        keys += KEYS_STEP;
      }
      await exited;
      // between kills: the repo stays consistent and no key is committed twice
      execFileSync("git", ["fsck", "--no-progress"], { cwd: repo, stdio: "pipe" });
    }
    expect(kills).toBe(12);
    // a clean run finishes every key; stray locks would make it fail
    const final = run(repo, keys);
    let stderr = "";
    final.stderr?.on("data", (b) => {
      stderr += b;
    });
    const code = await new Promise<number | null>((r) => final.on("exit", (c) => r(c)));
    expect(stderr).toBe("");
    expect(code).toBe(0);
    execFileSync("git", ["fsck", "--strict", "--no-progress"], { cwd: repo, stdio: "pipe" });
    for (let i = 0; i < keys; i++) expect(commitsWithKey(repo, `crash/${i}`)).toHaveLength(1);
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(lockFiles(join(repo, ".git"))).toEqual([]);
  });
});
