// The peers bench's workload, the same for every system (issue 35): N jobs, each an agent step
// that returns a fixed 1 KB output (recorded durably by the system), then one git commit of one
// file, jobs/<jobId>.txt holding that output, onto `main` of a local repository. The commit step of
// the peers and of the plain loop is written here twice, with the git command and with
// isomorphic-git, as their own docs show; idem commits with its own git.commit effect.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The fixed agent output: 1,024 bytes of printable ASCII, no quote or backslash (safe in JSON and sh). */
export const OUTPUT = `agent output, fixed 1 KB: ${"lorem ipsum dolor sit amet ".repeat(40)}`
  .slice(0, 1023)
  .concat("\n");

/** The identity every commit of the bench is made with (the peers' and the plain loop's). */
export const AUTHOR = { name: "bench", email: "bench@idem.invalid" };
export const GIT_ENV = {
  GIT_AUTHOR_NAME: AUTHOR.name,
  GIT_AUTHOR_EMAIL: AUTHOR.email,
  GIT_COMMITTER_NAME: AUTHOR.name,
  GIT_COMMITTER_EMAIL: AUTHOR.email,
};

export const jobId = (i, tag = "job") => `${tag}-${String(i).padStart(6, "0")}`;
export const jobIds = (n, tag = "job") => Array.from({ length: n }, (_, i) => jobId(i, tag));
export const fileOf = (id) => `jobs/${id}.txt`;
export const messageOf = (id) => `job ${id}`;
/** The scaling bench's repository alias for job `i` of `repos`: r00, r01, … (round robin). */
export const repoOf = (i, repos) => `r${String(i % repos).padStart(2, "0")}`;

const git = (cwd, args) =>
  run("git", args, { cwd, env: { ...process.env, ...GIT_ENV }, maxBuffer: 1 << 26 });

/** A repository on `main` with one seed commit (README.md) and an empty jobs/ folder. */
export function seedRepo(dir) {
  mkdirSync(join(dir, "jobs"), { recursive: true });
  const sync = (args) =>
    execFileSyncQuiet("git", args, { cwd: dir, env: { ...process.env, ...GIT_ENV } });
  sync(["init", "-q", "-b", "main"]);
  writeFileSync(join(dir, "README.md"), "peers bench\n");
  sync(["add", "README.md"]);
  sync(["commit", "-qm", "seed"]);
}

function execFileSyncQuiet(cmd, args, options) {
  return execFileSync(cmd, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * Commits on `main`, the seed included (one `git rev-list`, ~3 ms). Tried again a few times when
 * git cannot read the branch: isomorphic-git rewrites a ref in place (not by a rename), so a reader
 * can find it empty for a moment.
 */
export async function commitCount(repo) {
  for (let attempt = 1; ; attempt++) {
    try {
      const { stdout } = await git(repo, ["rev-list", "--count", "main"]);
      return Number(stdout.trim());
    } catch (e) {
      if (attempt >= 20) throw e;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/**
 * One function at a time: git cannot commit twice at once in one working tree (index.lock), so a
 * process that runs several jobs at once commits them one after another, as any user of a shared
 * working tree must. idem does the same per branch (its ordering target).
 */
export function serial() {
  let tail = Promise.resolve();
  return (fn) => {
    const p = tail.then(fn);
    tail = p.catch(() => {});
    return p;
  };
}

/** The commit step with the git command: write the file, `git add` it, `git commit`. */
export async function commitWithGit(repo, id, content) {
  await writeFile(join(repo, fileOf(id)), content);
  await git(repo, ["add", fileOf(id)]);
  await git(repo, ["commit", "-q", "-m", messageOf(id)]);
}

/** The commit step with isomorphic-git (`git` is its default export): write, add, commit. */
export async function commitWithIsomorphicGit(isogit, fs, repo, id, content) {
  await writeFile(join(repo, fileOf(id)), content);
  await isogit.add({ fs, dir: repo, filepath: fileOf(id) });
  await isogit.commit({ fs, dir: repo, message: messageOf(id), author: AUTHOR });
}

/**
 * What the repository holds after a run, against the jobs that were submitted: commits per job
 * (by message), commits naming a job whose changes hold another job's file, jobs whose file is not
 * on `main`, and `git fsck`'s verdict.
 * @returns {{ commits: number, duplicates: string[], missing: string[], foreign: string[],
 *   fsck: string, lock: boolean }}
 */
export async function auditRepo(repo, ids) {
  const { stdout } = await git(repo, [
    "log",
    "--format=%x00%s",
    "--name-only",
    "--no-renames",
    "main",
  ]);
  const perJob = new Map();
  const foreign = [];
  let commits = 0;
  for (const entry of stdout.split("\0").slice(1)) {
    commits += 1;
    const [subject, ...files] = entry.split("\n").filter(Boolean);
    const id = /^job (\S+)/.exec(subject ?? "")?.[1];
    if (!id) continue;
    perJob.set(id, (perJob.get(id) ?? 0) + 1);
    if (files.some((f) => f !== fileOf(id))) foreign.push(id);
  }
  const { stdout: tree } = await git(repo, ["ls-tree", "-r", "--name-only", "main", "jobs"]);
  const present = new Set(tree.split("\n").filter(Boolean));
  const duplicates = [...perJob].filter(([, n]) => n > 1).map(([id]) => id);
  const missing = ids.filter((id) => !present.has(fileOf(id)) || !perJob.has(id));
  let fsck = "ok";
  try {
    await git(repo, ["fsck", "--no-progress", "--no-dangling"]);
  } catch (e) {
    fsck = `git fsck failed: ${String(e.stderr || e.message)
      .trim()
      .split("\n")
      .slice(0, 3)
      .join("; ")}`;
  }
  return {
    commits,
    duplicates,
    missing,
    foreign,
    fsck,
    lock: existsSync(join(repo, ".git", "index.lock")),
  };
}
