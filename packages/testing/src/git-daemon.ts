import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./nats-server.js";
import { watchParent } from "./watchdog.js";

/** A `git daemon` on a free port (loopback unless `host` says otherwise) serving the bare repositories of a temporary folder. */
export interface GitDaemonHandle extends AsyncDisposable {
  /** `git://127.0.0.1:<port>`: a repository `name` is at `${url}/${name}`. */
  readonly url: string;
  readonly port: number;
  /** The folder served (`--base-path`); bare repositories are made in it by `createRepo`. */
  readonly baseDir: string;
  /** The daemon's process ID. */
  readonly pid: number;
  /**
   * Makes a bare repository `<name>.git` (branch `main` with one commit when `seed` is true) and
   * answers its path on disk and its git:// URL.
   */
  createRepo(name: string, options?: { seed?: boolean }): { path: string; url: string };
  /** Stops the daemon (SIGTERM to its PID, never by name) and removes the folder. Idempotent. */
  stop(): Promise<void>;
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: "Seed",
  GIT_AUTHOR_EMAIL: "seed@localhost",
  GIT_COMMITTER_NAME: "Seed",
  GIT_COMMITTER_EMAIL: "seed@localhost",
};

/**
 * Makes a bare repository at `path` (branch `main`); with `seed`, one first commit holding a
 * README, so the branch exists. Synchronous: for test setup.
 */
export function createBareRepo(path: string, seed = true): void {
  const run = (cwd: string, args: string[], input?: string) =>
    execFileSync("git", args, {
      cwd,
      input,
      env: { ...process.env, ...GIT_ENV },
      stdio: ["pipe", "pipe", "pipe"],
    })
      .toString()
      .trim();
  run(tmpdir(), ["init", "-q", "--bare", "-b", "main", path]);
  // Pushes into a served repository must be accepted by the receiving side.
  run(path, ["config", "receive.denyCurrentBranch", "ignore"]);
  if (!seed) return;
  const blob = run(path, ["hash-object", "-w", "--stdin"], "seed\n");
  const tree = run(path, ["mktree"], `100644 blob ${blob}\tREADME\n`);
  const commit = run(path, ["commit-tree", tree, "-m", "seed"]);
  run(path, ["update-ref", "refs/heads/main", commit]);
}

function canConnect(port: number, host: string): Promise<boolean> {
  return new Promise((res) => {
    const s = createConnection({ port, host });
    s.once("connect", () => {
      s.destroy();
      res(true);
    });
    s.once("error", () => res(false));
  });
}

/**
 * Starts `git daemon --export-all --enable=receive-pack --base-path=<tmp>` on 127.0.0.1 and a free
 * port, waits until it accepts connections, and answers its handle (for `await using`).
 * @throws Error when it does not listen within `readyTimeoutMs` (default 10 s) or exits first.
 */
export async function startGitDaemon(
  options: { readyTimeoutMs?: number; host?: string } = {},
): Promise<GitDaemonHandle> {
  const host = options.host ?? "127.0.0.1";
  const baseDir = await mkdtemp(join(tmpdir(), "idem-git-daemon-"));
  const port = await freePort();
  // git-daemon itself, not `git daemon`: the `git` wrapper runs the server as a child of its own,
  // which a SIGKILL of the wrapper (by PID: a harness's stop, its watchdog) leaves running.
  const child: ChildProcess = spawn(
    join(execFileSync("git", ["--exec-path"], { encoding: "utf8" }).trim(), "git-daemon"),
    [
      "--reuseaddr",
      "--export-all",
      "--enable=receive-pack",
      `--listen=${host}`,
      `--port=${port}`,
      `--base-path=${baseDir}`,
      baseDir,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  const deadline = Date.now() + (options.readyTimeoutMs ?? 10_000);
  let up = false;
  while (!up && child.exitCode === null && Date.now() < deadline) {
    up = await canConnect(port, host);
    if (!up) await new Promise((r) => setTimeout(r, 50));
  }
  const pid = child.pid ?? 0;
  if (pid !== 0) watchParent(pid, baseDir);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(pid, "SIGTERM");
        await exited;
      }
      await rm(baseDir, { recursive: true, force: true });
    })();
    return stopped;
  };
  if (!up) {
    await stop();
    throw new Error(`git daemon did not listen on ${port}: ${stderr.trim()}`);
  }
  const url = `git://${host}:${port}`;
  return {
    url,
    port,
    baseDir,
    pid,
    createRepo(name, opts = {}) {
      const path = join(baseDir, `${name}.git`);
      createBareRepo(path, opts.seed ?? true);
      return { path, url: `${url}/${name}.git` };
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
