import { promises as fs } from "node:fs";
import { dirname } from "node:path";
import { IdemError, redactUrl } from "@idem/schema";
import type { SimpleGit, SimpleGitProgressEvent } from "simple-git";
import { GIT_BASE_ARGS, gitEnv } from "../plumbing/run-git.js";

/** A first clone's progress, for a terminal (simple-git's progress events). */
export interface CloneProgress {
  alias: string;
  stage: string;
  percent: number;
}

/** What a push answered: the remote took it, or refused it because the branch is not at the lease. */
export type PushOutcome = "pushed" | "rejected";

/**
 * The caller's environment as git gets it (gitEnv), without the editors, pagers and programs a
 * network command never needs. What carries credentials and transport (GIT_ASKPASS, SSH_ASKPASS,
 * GIT_SSH_COMMAND, GIT_CONFIG_*, a proxy command) is the operator's and stays: simple-git refuses
 * those unless allowed, so they are allowed below. No agent string ever reaches the environment.
 */
const DROPPED_ENV = new Set([
  "EDITOR",
  "VISUAL",
  "PAGER",
  "GIT_PAGER",
  "GIT_SEQUENCE_EDITOR",
  "GIT_EXTERNAL_DIFF",
  "GIT_TEMPLATE_DIR",
  "GIT_EXEC_PATH",
  "PREFIX",
]);
let networkEnv: Record<string, string> | undefined;
function remoteEnv(): Record<string, string> {
  networkEnv ??= Object.fromEntries(
    Object.entries(gitEnv()).filter(([k]) => !DROPPED_ENV.has(k.toUpperCase())),
  );
  return networkEnv;
}

/** How long a network git command may stay silent before it is killed (simple-git's timeout). */
const SILENT_MS = 120_000;

/**
 * The network operations on one remote repository (ls-remote, clone, fetch, push) through
 * simple-git, with credentials left to git (ssh agent, credential helpers, GIT_ASKPASS; no prompt)
 * and every URL redacted from the errors. Refspecs are built here from checked branch names; the
 * URL always comes after `--`.
 */
export class RemoteGit {
  constructor(
    readonly alias: string,
    private readonly url: string,
    private readonly mirror: string,
  ) {}

  /** The URL as messages may print it. */
  get shownUrl(): string {
    return redactUrl(this.url);
  }

  /**
   * simple-git for one command in `baseDir`, imported by the first network command: a process
   * whose config names no remote repository (`idem status` and `idem submit` among them) never
   * loads it.
   */
  private async git(
    baseDir: string,
    progress?: (e: SimpleGitProgressEvent) => void,
  ): Promise<SimpleGit> {
    const { simpleGit } = await import("simple-git");
    return simpleGit({
      baseDir,
      config: GIT_BASE_ARGS.filter((a) => a !== "-c" && a !== "--no-pager"),
      timeout: { block: SILENT_MS },
      // The operator's own environment (credential and transport settings included) reaches git.
      allowEnvironment: Object.keys(remoteEnv()),
      unsafe: {
        allowUnsafeAskPass: true,
        allowUnsafeSshCommand: true,
        allowUnsafeConfigPaths: true,
        allowUnsafeConfigEnvCount: true,
        allowUnsafeGitProxy: true,
      },
      ...(progress ? { progress } : {}),
    }).env(remoteEnv());
  }

  /** Wraps a simple-git failure as UNAVAILABLE (a network or server failure is worth a retry). */
  private fail(what: string, e: unknown): never {
    const msg = redactUrl(e instanceof Error ? e.message : String(e)).trim();
    throw new IdemError(
      "UNAVAILABLE",
      `repo "${this.alias}": ${what} ${this.shownUrl} failed: ${msg}`,
      {
        cause: new Error(msg),
      },
    );
  }

  /** The commit `refs/heads/<branch>` of the remote points at, or null. @throws UNAVAILABLE */
  async tip(branch: string): Promise<string | null> {
    let out: string;
    try {
      out = await (await this.git(this.mirror)).raw([
        "ls-remote",
        "--",
        this.url,
        `refs/heads/${branch}`,
      ]);
    } catch (e) {
      this.fail("ls-remote of", e);
    }
    for (const line of out.split("\n")) {
      const [sha, ref] = line.split("\t");
      if (ref === `refs/heads/${branch}` && sha) return sha;
    }
    return null;
  }

  /** True when the remote has at least one branch. @throws UNAVAILABLE */
  async hasBranches(): Promise<boolean> {
    try {
      const out = await (await this.git(this.mirror)).raw(["ls-remote", "--heads", "--", this.url]);
      return out.trim().length > 0;
    } catch (e) {
      this.fail("ls-remote of", e);
    }
  }

  /**
   * Makes the mirror: a bare clone into a temporary folder beside it, renamed into place, so a
   * killed clone or two processes cloning at once never leave a half mirror.
   * @throws UNAVAILABLE
   */
  async cloneMirror(onProgress?: (p: CloneProgress) => void): Promise<void> {
    await fs.mkdir(dirname(this.mirror), { recursive: true });
    const tmp = `${this.mirror}.clone-${process.pid}-${Date.now().toString(36)}`;
    const progress = onProgress
      ? (e: SimpleGitProgressEvent) =>
          onProgress({ alias: this.alias, stage: e.stage, percent: e.progress })
      : undefined;
    try {
      // With a listener, `--progress` before `--` (simple-git's progress plugin would otherwise
      // append it after the repository and folder, where git takes it for a third argument).
      await (await this.git(dirname(this.mirror), progress)).raw([
        "clone",
        "--bare",
        "--no-tags",
        progress ? "--progress" : "-q",
        "--",
        this.url,
        tmp,
      ]);
      await fs.rename(tmp, this.mirror).catch(async (e: NodeJS.ErrnoException) => {
        // Another process made it first: theirs is as good as ours.
        if (e.code !== "ENOTEMPTY" && e.code !== "EEXIST") throw e;
      });
    } catch (e) {
      if (e instanceof IdemError) throw e;
      if ((e as NodeJS.ErrnoException).code !== undefined) throw e;
      this.fail("clone of", e);
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  }

  /**
   * Fetches the remote branch into `intoRef` of the mirror (forced: the remote is the truth) and
   * answers the commit fetched, or null when the remote has no such branch.
   * @throws UNAVAILABLE
   */
  async fetch(branch: string, intoRef: string): Promise<string | null> {
    try {
      await (await this.git(this.mirror)).raw([
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        "-q",
        "--",
        this.url,
        `+refs/heads/${branch}:${intoRef}`,
      ]);
    } catch (e) {
      const msg = e instanceof Error ? e.message : "";
      if (/couldn't find remote ref/i.test(msg)) return null;
      this.fail("fetch from", e);
    }
    const out = await (await this.git(this.mirror)).raw(["rev-parse", "--verify", "-q", intoRef]);
    return out.trim() || null;
  }

  /**
   * Pushes `commit` to `refs/heads/<branch>` only if the remote branch is still at `lease` (null:
   * only if it does not exist): `--force-with-lease` with the expected value spelled out, so the
   * server's own compare-and-swap decides and no commit pushed by someone else is ever dropped.
   * @throws IdemError TARGET_CONFLICT when the server refuses the change itself (a hook declined
   * it, a protected branch); UNAVAILABLE for anything else (the push may or may not have landed).
   */
  async push(branch: string, commit: string, lease: string | null): Promise<PushOutcome> {
    const ref = `refs/heads/${branch}`;
    try {
      await (await this.git(this.mirror)).raw([
        "push",
        "--porcelain",
        "--no-verify",
        `--force-with-lease=${ref}:${lease ?? ""}`,
        "--",
        this.url,
        `${commit}:${ref}`,
      ]);
      return "pushed";
    } catch (e) {
      const msg = e instanceof Error ? e.message : "";
      if (
        /\[rejected\]|stale info|fetch first|non-fast-forward|\[remote rejected\].*(?:lock|stale|failed to update ref)/i.test(
          msg,
        )
      )
        return "rejected";
      // The server refused the change itself (a hook declined it, a protected branch): no retry
      // changes that answer, a person must look.
      const refused = /\[remote rejected\][^\n]*\(([^)\n]*)\)/i.exec(msg);
      if (refused) {
        const reason = redactUrl(refused[1] ?? "");
        throw new IdemError(
          "TARGET_CONFLICT",
          `repo "${this.alias}": ${this.shownUrl} refused the push to ${ref}: ${reason}`,
          { details: { reason } },
        );
      }
      this.fail("push to", e);
    }
  }
}
