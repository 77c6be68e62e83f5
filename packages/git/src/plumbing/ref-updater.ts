import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { IdemError } from "@idem/schema";
import { setRef } from "./cat-file-process.js";
import { GIT_BASE_ARGS, GitError, type GitResult, gitEnv } from "./run-git.js";

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * One long-lived `git update-ref --stdin` per repository while idem holds the repo lock: each
 * transaction is `start`, the updates, `prepare`, `commit` on the same process, so a ref move costs
 * a pipe round trip instead of a git process.
 *
 * Crash safety is git's: a transaction opened with `start` is aborted (its ref locks released) when
 * stdin reaches EOF before `commit`, which is what a killed idem leaves; a failed `prepare` (a ref
 * not where the transaction expects it) makes git abort and exit, and the next call starts a fresh
 * process. The child inherits the lock descriptor (fd 3), so it holds idem's lock for as long as it
 * lives, even orphaned.
 */
export class RefUpdater {
  private child: ChildProcessWithoutNullStreams | undefined;
  private out = "";
  private err = "";
  private waiter: Waiter | undefined;

  constructor(
    private readonly cwd: string,
    private readonly lockFd: number,
    private readonly durable: boolean,
  ) {}

  /**
   * Runs one transaction (update-ref --stdin lines without start/prepare/commit).
   * @throws GitError when git refuses it (the process is gone then).
   */
  run(lines: string[]): Promise<void> {
    if (this.waiter) return Promise.reject(new Error("RefUpdater: one transaction at a time"));
    for (const l of lines) {
      if (/[\n\0]/.test(l)) return Promise.reject(new Error("RefUpdater: bad line"));
    }
    const child = this.ensure();
    setRef(child, true);
    this.out = "";
    this.err = "";
    return new Promise<void>((resolve, reject) => {
      this.waiter = { resolve, reject };
      // One write: a partial transaction never reaches `commit`, and EOF aborts it.
      child.stdin.write(`start\n${lines.join("\n")}\nprepare\ncommit\n`);
    });
  }

  close(): void {
    const child = this.child;
    this.child = undefined;
    if (child) child.stdin.end();
  }

  private ensure(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const pre = this.durable ? ["-c", "core.fsync=reference", "-c", "core.fsyncMethod=fsync"] : [];
    // Full oids only: no lookup of refs named like them (that warning costs ~12 stats per oid).
    const quiet = ["-c", "core.warnAmbiguousRefs=false"];
    const child = spawn("git", [...GIT_BASE_ARGS, ...quiet, ...pre, "update-ref", "--stdin"], {
      cwd: this.cwd,
      env: gitEnv(),
      stdio: ["pipe", "pipe", "pipe", this.lockFd],
    }) as unknown as ChildProcessWithoutNullStreams;
    this.child = child;
    child.stdout.on("data", (b: Buffer) => {
      this.out += b.toString("utf8");
      if (this.out.includes("commit: ok\n")) {
        const w = this.waiter;
        this.waiter = undefined;
        setRef(child, false);
        w?.resolve();
      }
    });
    child.stderr.on("data", (b: Buffer) => {
      this.err += b.toString("utf8");
    });
    child.stdin.on("error", () => {});
    const fail = (code: number | null, e?: Error) => {
      if (this.child === child) this.child = undefined;
      const w = this.waiter;
      this.waiter = undefined;
      if (!w) return;
      if (e) {
        w.reject(new IdemError("UNAVAILABLE", `cannot run git: ${e.message}`, { cause: e }));
        return;
      }
      const result: GitResult = {
        code: code ?? -1,
        stdout: Buffer.from(this.out),
        stderr: this.err,
      };
      w.reject(new GitError(["update-ref", "--stdin"], result, null));
    };
    child.on("error", (e) => fail(null, e));
    child.on("close", (code) => fail(code));
    setRef(child, false);
    return child;
  }
}
