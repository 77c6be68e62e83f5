import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GitPatchSpec } from "@idem/effects";
import { type Config, defaultConfig, ManualClock } from "@idem/schema";
import { configSection } from "@idem/testing";

/** Runs git synchronously with stdin and returns stdout untrimmed (patches keep their last newline). */
export function gitRaw(cwd: string, args: string[], input?: string): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    input,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Human",
      GIT_AUTHOR_EMAIL: "h@x",
      GIT_COMMITTER_NAME: "Human",
      GIT_COMMITTER_EMAIL: "h@x",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** Makes a change in the working tree of `repo`, returns its diff against HEAD, and undoes it. */
export function diffOf(repo: string, change: () => void, args: string[] = []): string {
  change();
  git(repo, "add", "-A");
  const d = gitRaw(repo, ["diff", "--cached", "-M", ...args]);
  git(repo, "reset", "-q", "--hard");
  git(repo, "clean", "-qfd");
  return d;
}

/** Runs git synchronously in `cwd` and returns trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Human",
      GIT_AUTHOR_EMAIL: "h@x",
      GIT_COMMITTER_NAME: "Human",
      GIT_COMMITTER_EMAIL: "h@x",
    },
    stdio: ["pipe", "pipe", "pipe"],
  }).trim();
}

export interface Sandbox {
  dir: string;
  config: Config;
  cleanup(): void;
}

/** A temp folder with a config whose paths point inside it. */
export function sandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "idem-effects-test-"));
  const config = defaultConfig(dir);
  return { dir, config, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Creates a repo (non-bare with one commit on main, unless told otherwise) and registers it as `alias`. */
export function addRepo(
  sb: Sandbox,
  alias = "site",
  opts: { bare?: boolean; empty?: boolean; branches?: string[]; branch?: string } = {},
): string {
  const path = join(sb.dir, `repo-${alias}`);
  mkdirSync(path, { recursive: true });
  git(path, "init", "-q", "-b", opts.branch ?? "main", ...(opts.bare ? ["--bare"] : []));
  if (!opts.empty) {
    if (opts.bare) {
      const work = mkdtempSync(join(sb.dir, "seed-"));
      git(work, "init", "-q", "-b", opts.branch ?? "main");
      writeFileSync(join(work, "README.md"), "hello\n");
      git(work, "add", "README.md");
      git(work, "commit", "-q", "-m", "seed");
      git(work, "push", "-q", path, `HEAD:refs/heads/${opts.branch ?? "main"}`);
    } else {
      writeFileSync(join(path, "README.md"), "hello\n");
      git(path, "add", "README.md");
      git(path, "commit", "-q", "-m", "seed");
    }
  }
  configSection(sb.config, "repos")[alias] = {
    path,
    branch: opts.branch ?? "main",
    branches: opts.branches ?? [],
    author: { name: "idem", email: "idem@localhost" },
  };
  return path;
}

export function addRoot(sb: Sandbox, alias = "outbox"): string {
  const path = join(sb.dir, `root-${alias}`);
  mkdirSync(path, { recursive: true });
  configSection(sb.config, "roots")[alias] = { path };
  return path;
}

/** Commits carrying `Idem-Effect: <key>` reachable from the branch. */
export function commitsWithKey(repo: string, key: string, branch = "main"): string[] {
  const re = key.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const out = git(repo, "log", "--format=%H", `--grep=^Idem-Effect: ${re}$`, branch);
  return out ? out.split("\n") : [];
}

export const clock = () => new ManualClock(1_700_000_000_000);

export const patchSpec = (patch: string, extra: Partial<GitPatchSpec> = {}): GitPatchSpec => ({
  kind: "git.patch",
  repo: "site",
  message: "agent: patch",
  patch,
  ...extra,
});
