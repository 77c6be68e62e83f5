import { execFile } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { RepoConfig } from "@idem/git";
import { namedBranches } from "@idem/git";
import type { AddFinding } from "./add-finding.js";

/**
 * A git repo on this host as doctor checks it: the path exists and is the top of a repository,
 * the branch (a violation) and extra branches (warnings) exist, and no index or HEAD lock is left.
 * Read-only; never throws (git that cannot run is a violation).
 */
export async function checkLocalRepo(
  alias: string,
  repo: RepoConfig & { path: string },
  add: AddFinding,
): Promise<void> {
  const key = `repos.${alias}`;
  if (!existsSync(repo.path)) {
    add(
      "violation",
      `${key}.path`,
      `${repo.path} does not exist`,
      `create it (git init -b ${repo.branch} ${repo.path}) or fix ${key}.path`,
    );
    return;
  }
  let top: string;
  try {
    const r = await git(repo.path, ["rev-parse", "--show-toplevel"]);
    if (r.code !== 0) {
      add(
        "violation",
        `${key}.path`,
        `${repo.path} is not a git repository`,
        `run git init -b ${repo.branch} in it, or fix ${key}.path`,
      );
      return;
    }
    top = r.stdout.trim();
  } catch (e) {
    add("violation", key, `cannot run git: ${(e as Error).message}`, "install git (2.39 or later)");
    return;
  }
  if (realpathSync(top) !== realpathSync(repo.path)) {
    add(
      "violation",
      `${key}.path`,
      `${repo.path} is inside the repository ${top}, not the top of one`,
      `point ${key}.path at ${top}, or git init ${repo.path} on its own`,
    );
  }
  // A branch whose ref is there but whose commit cannot be read lost objects: checkRepoObjects says so.
  if (
    !(await branchHasCommit(repo.path, repo.branch)) &&
    !(await refExists(repo.path, repo.branch))
  ) {
    const fix = await missingBranchFix(alias, repo.path, repo.branch);
    add("violation", `${key}.branch`, fix.finding, fix.fix);
  }
  for (const branch of namedBranches(repo).slice(1)) {
    if ((await branchHasCommit(repo.path, branch)) || (await refExists(repo.path, branch)))
      continue;
    add(
      "warning",
      `${key}.branches`,
      `branch ${branch} does not exist in ${repo.path}`,
      `create it (git -C ${repo.path} branch ${branch} ${repo.branch}) before an agent targets it`,
    );
  }
  await checkRepoObjects(alias, repo, add);
  for (const lock of ["index.lock", "HEAD.lock"]) {
    const gitDir = await git(repo.path, ["rev-parse", "--absolute-git-dir"]);
    const file = join(gitDir.stdout.trim(), lock);
    if (gitDir.code === 0 && existsSync(file)) {
      add(
        "warning",
        key,
        `${file} exists: a git process was killed or is running`,
        "idem removes a stale lock of its own under its repo lock; if no git runs there, delete the file",
      );
    }
  }
}

/** Whether the branch's ref exists, whatever its commit (which a power loss may have lost). */
async function refExists(path: string, branch: string): Promise<boolean> {
  const r = await git(path, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]);
  return r.code === 0;
}

/** Whether `refs/heads/<branch>` names a commit in the repository at `path`. */
async function branchHasCommit(path: string, branch: string): Promise<boolean> {
  const r = await git(path, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`]);
  return r.code === 0;
}

/**
 * What doctor says of a configured branch that has no commit, naming the branch the repository is
 * on (after a plain `git init`, often `master`), and a fix that works from where it stands: every
 * command it offers leaves the working tree on the configured branch, so what the interpreter
 * commits there is what the working tree shows.
 */
async function missingBranchFix(
  alias: string,
  path: string,
  branch: string,
): Promise<{ finding: string; fix: string }> {
  const head = (await git(path, ["symbolic-ref", "--quiet", "--short", "HEAD"])).stdout.trim();
  const headCommits = head !== "" && (await branchHasCommit(path, head));
  const commit = `git -C ${path} commit --allow-empty -m init`;
  if (head === branch) {
    return {
      finding: `branch ${branch} has no commit yet in ${path}`,
      fix: `make its first commit: \`${commit}\``,
    };
  }
  if (head === "") {
    return {
      finding: `branch ${branch} does not exist in ${path}, whose HEAD is detached`,
      fix: `create it where HEAD is: \`git -C ${path} checkout -b ${branch}\`, or set repos.${alias}.branch to an existing branch`,
    };
  }
  const rename = `git -C ${path} branch -m ${head} ${branch}`;
  return {
    finding: `branch ${branch} does not exist in ${path}; the repository is on branch ${head}${headCommits ? "" : " (no commit yet)"}`,
    fix: `set repos.${alias}.branch to "${head}"${headCommits ? "" : ` and make its first commit (\`${commit}\`)`}, or rename ${head} to ${branch}: \`${rename}${headCommits ? "" : ` && ${commit}`}\``,
  };
}

/**
 * What a power loss can leave in a repository whose writes were not fsynced (docs/runbook.md,
 * "After a power loss"): a branch whose tip, or a tree under it, git cannot read (a violation: a
 * commit built on it would be corrupt too), and an index git cannot read (a violation: every git
 * effect on the checked-out branch fails until it is reset). One `git ls-tree` per branch and one
 * `git ls-files` (O(tree), not O(history)).
 */
async function checkRepoObjects(
  alias: string,
  repo: RepoConfig & { path: string },
  add: AddFinding,
): Promise<void> {
  const key = `repos.${alias}`;
  for (const branch of [repo.branch, ...repo.branches]) {
    if (!(await refExists(repo.path, branch))) continue;
    if (await commitIsWhole(repo.path, `refs/heads/${branch}`)) continue;
    const whole = await lastWholeCommit(repo.path, branch);
    add(
      "violation",
      `${key}.branch`,
      `branch ${branch} of ${repo.path} points at a commit or tree git cannot read: objects were lost (a power loss with git effects not fsynced?)${whole ? `; its last whole commit is ${whole}` : ""}`,
      whole
        ? `move it back before anything commits on it: git -C ${repo.path} update-ref refs/heads/${branch} ${whole} (docs/runbook.md, "After a power loss")`
        : `move it back to its last whole commit before anything commits on it (git -C ${repo.path} fsck names the damage; docs/runbook.md, "After a power loss")`,
    );
  }
  const bare = (await git(repo.path, ["rev-parse", "--is-bare-repository"])).stdout.trim();
  if (bare === "true") return;
  const index = await git(repo.path, ["ls-files", "--stage"]);
  if (index.code !== 0) {
    add(
      "violation",
      key,
      `the index of ${repo.path} cannot be read (a power loss, or a disk error): every git effect on its checked-out branch fails until it is reset`,
      `remake it from the branch (the files are left alone): rm -f "$(git -C ${repo.path} rev-parse --absolute-git-dir)/index" && git -C ${repo.path} reset -q, then idem dlq retry each run that went dead (docs/runbook.md, "After a power loss")`,
    );
  }
}

/**
 * The newest commit the branch's reflog names whose commit and whole tree git can read: where a
 * branch that lost its last commits goes back to. Undefined without a reflog, or when none is whole.
 */
async function lastWholeCommit(path: string, branch: string): Promise<string | undefined> {
  const gitDir = (await git(path, ["rev-parse", "--absolute-git-dir"])).stdout.trim();
  let log: string;
  try {
    log = readFileSync(join(gitDir, "logs", "refs", "heads", branch), "utf8");
  } catch {
    return undefined;
  }
  const seen = new Set<string>();
  const candidates: string[] = [];
  for (const line of log.trim().split("\n").reverse()) {
    const [before, after] = line.split(" ");
    for (const sha of [after, before]) {
      if (!sha || !/^[0-9a-f]{40,64}$/.test(sha) || /^0+$/.test(sha) || seen.has(sha)) continue;
      seen.add(sha);
      candidates.push(sha);
    }
  }
  for (const sha of candidates.slice(0, 200)) {
    if (await commitIsWhole(path, sha)) return sha;
  }
  return undefined;
}

/**
 * Whether git can read the commit `rev`, every tree under it and every blob it names (an object
 * file a power loss left empty reads as missing). O(tree): one `git ls-tree` and one `git cat-file
 * --batch-check`.
 */
async function commitIsWhole(path: string, rev: string): Promise<boolean> {
  const listed = await git(path, ["ls-tree", "-r", "-t", "--format=%(objectname)", rev]);
  if (listed.code !== 0) return false;
  const checked = await new Promise<string | undefined>((done) => {
    const child = execFile(
      "git",
      ["-C", path, "cat-file", "--batch-check=%(objectname) %(objecttype)"],
      { timeout: 60_000, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
      (error, stdout) => done(error ? undefined : stdout),
    );
    child.stdin?.end(listed.stdout);
  });
  return checked !== undefined && !/ missing$/m.test(checked);
}

interface GitAnswer {
  code: number;
  stdout: string;
}

/**
 * `git -C dir ...args` with maintenance off: resolves with the exit code and stdout whatever the
 * exit; rejects only when git cannot start.
 */
export function git(dir: string, args: readonly string[]): Promise<GitAnswer> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      "git",
      ["-C", dir, "-c", "maintenance.auto=false", ...args],
      { timeout: 30_000, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
      (error, stdout) => {
        if (error && typeof (error as { code?: unknown }).code === "string") {
          reject(error);
          return;
        }
        const code = error ? Number((error as { code?: number }).code ?? 1) : 0;
        resolvePromise({ code, stdout });
      },
    );
  });
}
