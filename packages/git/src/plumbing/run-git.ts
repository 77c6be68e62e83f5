import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { IdemError } from "@idem/schema";

/** What a finished git process left behind. */
export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Input, environment, accepted exit codes and the lock descriptor a git child inherits. */
export interface RunGitOptions {
  /** Bytes for stdin. */
  input?: string | Uint8Array;
  /** Extra environment (e.g. GIT_INDEX_FILE). */
  env?: Record<string, string>;
  /** Exit codes that are answers, not failures (e.g. 1 for `merge-base --is-ancestor`). */
  okCodes?: readonly number[];
  /**
   * idem's repo lock descriptor, inherited by the child as fd 3: flock belongs to the open file
   * description, so a git child orphaned by a killed idem keeps the lock until it exits, and the
   * next holder never removes a lock file such a child still uses.
   */
  lockFd?: number;
}

/** Variables of the caller's environment that would redirect git away from the repo we name. */
const STRIPPED_ENV = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_NAMESPACE",
  "GIT_COMMON_DIR",
  "GIT_CEILING_DIRECTORIES",
  "GIT_PREFIX",
  "GIT_EDITOR",
];

let baseEnv: Record<string, string> | undefined;

/** The environment every git child gets: the caller's, minus repo redirections, C locale, no prompts. */
export function gitEnv(extra?: Record<string, string>): Record<string, string> {
  if (!baseEnv) {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !STRIPPED_ENV.includes(k)) env[k] = v;
    }
    env.LC_ALL = "C";
    env.GIT_TERMINAL_PROMPT = "0";
    env.GIT_OPTIONAL_LOCKS = "0";
    baseEnv = env;
  }
  return extra ? { ...baseEnv, ...extra } : baseEnv;
}

/** Options every idem git invocation starts with: no background maintenance, no pager. */
export const GIT_BASE_ARGS = ["-c", "maintenance.auto=false", "-c", "gc.auto=0", "--no-pager"];

/**
 * Runs git with an argument array (never a shell) in `cwd`. Resolves with the result when the exit
 * code is 0 or listed in `okCodes`.
 * @throws IdemError UNAVAILABLE when git cannot be started; TARGET_CONFLICT when git cannot read
 * the index (damaged); a plain GitError for other exit codes (callers map git's answer to a code,
 * since only they know what it means).
 */
export function runGit(
  cwd: string,
  args: readonly string[],
  options: RunGitOptions = {},
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", [...GIT_BASE_ARGS, ...args], {
      cwd,
      env: gitEnv(options.env),
      stdio: options.lockFd === undefined ? "pipe" : ["pipe", "pipe", "pipe", options.lockFd],
    }) as ChildProcessWithoutNullStreams;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.stdin.on("error", () => {
      // EPIPE when git exits before reading all of stdin; the exit code tells the story.
    });
    child.on("error", (e) => {
      reject(new IdemError("UNAVAILABLE", `cannot run git: ${e.message}`, { cause: e }));
    });
    child.on("close", (code, signal) => {
      const result: GitResult = {
        code: code ?? -1,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err).toString("utf8"),
      };
      if (code === 0 || (code !== null && options.okCodes?.includes(code))) resolve(result);
      else reject(damagedIndex(cwd, result) ?? new GitError(args, result, signal));
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/** What git says of an index file it cannot read (read-cache.c). */
const DAMAGED_INDEX =
  /index file corrupt|bad signature 0x[0-9a-f]+|bad index file sha1 signature|index file smaller than expected/;

/**
 * A git command that failed on a damaged index (a power loss, a torn copy): TARGET_CONFLICT (class
 * conflict, so its run goes dead at once instead of failing the same way on every retry) naming the
 * runbook's fix; undefined for any other failure.
 */
function damagedIndex(cwd: string, result: GitResult): IdemError | undefined {
  const found = DAMAGED_INDEX.exec(result.stderr);
  if (!found) return undefined;
  return new IdemError(
    "TARGET_CONFLICT",
    `the git index of ${cwd} cannot be read (git: ${found[0]}): nothing is committed there until it is remade from the branch (docs/runbook.md, "After a power loss": a damaged index)`,
  );
}

/** A git command that exited with an unexpected code. Internal: handlers turn it into an IdemError. */
export class GitError extends Error {
  override readonly name = "GitError";
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
    signal: NodeJS.Signals | null,
  ) {
    super(
      `git ${args[0] ?? ""} exited ${signal ?? result.code}: ${result.stderr.trim().split("\n").slice(-3).join(" | ")}`,
    );
  }
}
