import { execFile } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import type { RepoConfig } from "@idem/git";
import { namedBranches } from "@idem/git";
import { redactUrl } from "@idem/kit";
import type { AddFinding } from "./add-finding.js";

interface Answer {
  code: number;
  stdout: string;
  stderr: string;
}

/** git with no prompt (credentials come from the agent, a helper or GIT_ASKPASS, or not at all). */
function git(args: readonly string[], cwd?: string): Promise<Answer> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      "git",
      ["-c", "maintenance.auto=false", ...args],
      {
        cwd,
        timeout: 30_000,
        encoding: "utf8",
        env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
      },
      (error, stdout, stderr) => {
        if (error && typeof (error as { code?: unknown }).code === "string") {
          reject(error);
          return;
        }
        const code = error ? Number((error as { code?: number }).code ?? 1) : 0;
        resolvePromise({ code, stdout, stderr });
      },
    );
  });
}

/**
 * A repo on a server (`repos.<alias>.url`) as doctor checks it: the remote answers (one
 * `git ls-remote --heads`), its branch exists (a violation; extra branches are warnings; an empty
 * remote is a warning: the first effect creates the branch), and this host's mirror, when made, is
 * a healthy bare repository (else: remove it, idem clones it again). Read-only; never throws; no
 * finding prints the URL's user or password.
 */
export async function checkRemoteRepo(
  alias: string,
  repo: RepoConfig,
  add: AddFinding,
): Promise<void> {
  const key = `repos.${alias}`;
  const url = repo.url as string;
  const shown = redactUrl(url);
  let heads: Answer;
  try {
    heads = await git(["ls-remote", "--heads", "--", url]);
  } catch (e) {
    add(
      "violation",
      key,
      `cannot run git: ${redactUrl((e as Error).message)}`,
      "install git (2.39 or later)",
    );
    return;
  }
  if (heads.code !== 0) {
    add(
      "violation",
      `${key}.url`,
      `the remote ${shown} does not answer: ${redactUrl(heads.stderr.trim().split("\n")[0] ?? "")}`,
      "check the URL, the network and the credentials git uses (ssh agent, credential helper, GIT_ASKPASS)",
    );
  } else {
    const branches = new Set(
      heads.stdout
        .split("\n")
        .map((l) => l.split("\t")[1])
        .filter((r): r is string => r?.startsWith("refs/heads/") === true)
        .map((r) => r.slice("refs/heads/".length)),
    );
    for (const [i, branch] of namedBranches(repo).entries()) {
      if (branches.has(branch)) continue;
      if (i === 0 && branches.size === 0) {
        add(
          "warning",
          `${key}.branch`,
          `the remote ${shown} has no branch yet`,
          `nothing to do: the first effect creates ${branch}; or push a first commit to it`,
        );
        continue;
      }
      add(
        i === 0 ? "violation" : "warning",
        i === 0 ? `${key}.branch` : `${key}.branches`,
        `branch ${branch} does not exist on the remote ${shown}`,
        `push it to the remote (git push <remote> <commit>:refs/heads/${branch}), or fix ${i === 0 ? `${key}.branch` : `${key}.branches`}`,
      );
    }
  }
  await checkMirror(key, repo.cacheDir as string, add);
}

/** The mirror: absent is fine (made on first use); present, a bare repository whose objects are whole. */
async function checkMirror(key: string, mirror: string, add: AddFinding): Promise<void> {
  if (!existsSync(mirror)) {
    // Made on first use: the nearest existing folder above it must let this user create it.
    let dir = dirname(mirror);
    while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
    try {
      accessSync(dir, constants.W_OK);
    } catch {
      add(
        "violation",
        `${key}.cacheDir`,
        `the mirror ${mirror} cannot be made: ${dir} is not writable by this user`,
        `chown or chmod ${dir}, or point ${key}.cacheDir elsewhere`,
      );
    }
    return;
  }
  const fix = `remove ${mirror}: idem clones the mirror again on first use (it holds nothing the remote lacks)`;
  const bare = await git(["rev-parse", "--is-bare-repository"], mirror).catch(() => undefined);
  if (bare?.code !== 0 || bare.stdout.trim() !== "true") {
    add("violation", `${key}.cacheDir`, `the mirror ${mirror} is not a bare git repository`, fix);
    return;
  }
  const fsck = await git(
    ["fsck", "--connectivity-only", "--no-dangling", "--no-progress"],
    mirror,
  ).catch(() => undefined);
  if (fsck?.code !== 0) {
    add(
      "violation",
      `${key}.cacheDir`,
      `the mirror ${mirror} is damaged: ${(fsck?.stderr ?? "git fsck did not run").trim().split("\n")[0]}`,
      fix,
    );
  }
}
