// Hints that lead somewhere (issue 36): after a plain `git init` (branch master), doctor names the
// branch the repository is on and offers commands that work from there; running the command it
// offers leaves the working tree on the configured branch with a commit, and doctor is satisfied.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "@idem/schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runDoctor } from "../src/doctor/run-doctor.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "idem-doctor-branch-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "test",
  GIT_AUTHOR_EMAIL: "test@localhost",
  GIT_COMMITTER_NAME: "test",
  GIT_COMMITTER_EMAIL: "test@localhost",
};
const git = (repo: string, ...args: string[]) =>
  execFileSync("git", ["-C", repo, ...args], { env: GIT_ENV, encoding: "utf8" }).trim();

async function branchFinding(raw: Record<string, unknown>) {
  const parsed = parseConfig(raw, { dir, file: join(dir, "idem.config.json") });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const report = await runDoctor(parsed.config);
  return report.findings.find((f) => f.key === "repos.site.branch");
}

/** The last command a fix offers, in backquotes, run as a shell would. */
function runOffered(fix: string): void {
  const commands = [...fix.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  const command = commands.at(-1);
  if (!command) throw new Error(`no command offered in: ${fix}`);
  execFileSync("sh", ["-c", command], { env: GIT_ENV, cwd: dir });
}

describe("doctor on a repository that is not on the configured branch", () => {
  const repo = () => join(dir, "site");
  const config = (branch?: string) => ({
    repos: { site: { path: "site", ...(branch === undefined ? {} : { branch }) } },
  });

  it("after a plain git init on master names master, and its offered command puts the working tree on main", async () => {
    mkdirSync(repo());
    git(repo(), "-c", "init.defaultBranch=master", "init", "-q");
    const found = await branchFinding(config());
    expect(found?.finding).toContain("on branch master (no commit yet)");
    expect(found?.fix).toContain('set repos.site.branch to "master"');
    runOffered(found?.fix ?? "");
    expect(git(repo(), "symbolic-ref", "--short", "HEAD")).toBe("main");
    expect(await branchFinding(config())).toBeUndefined();
  });

  it("with commits on master, offers the rename that keeps them, or the config key", async () => {
    mkdirSync(repo());
    git(repo(), "-c", "init.defaultBranch=master", "init", "-q");
    writeFileSync(join(repo(), "README.md"), "hi\n");
    git(repo(), "add", "README.md");
    git(repo(), "commit", "-q", "-m", "first");
    const found = await branchFinding(config());
    expect(found?.finding).toContain("the repository is on branch master");
    expect(found?.fix).toContain('set repos.site.branch to "master"');
    expect(await branchFinding(config("master"))).toBeUndefined();
    runOffered(found?.fix ?? "");
    expect(git(repo(), "symbolic-ref", "--short", "HEAD")).toBe("main");
    expect(git(repo(), "log", "--format=%s", "main")).toBe("first");
    expect(await branchFinding(config())).toBeUndefined();
  });

  it("on the configured branch with no commit yet, offers the first commit on it", async () => {
    mkdirSync(repo());
    git(repo(), "init", "-q", "-b", "main");
    const found = await branchFinding(config());
    expect(found?.finding).toContain("branch main has no commit yet");
    runOffered(found?.fix ?? "");
    expect(await branchFinding(config())).toBeUndefined();
  });
});
