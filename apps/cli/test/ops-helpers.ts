import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SqliteJournalStore } from "@idem/journal";

/** The committed bin shim; suites that spawn it need `npx tsc -b apps/cli` first. */
export const IDEM_BIN = resolve(dirname(fileURLToPath(import.meta.url)), "../bin/idem.js");

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real built CLI in a child process. */
export function idem(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [IDEM_BIN, ...args], {
      cwd: options.cwd,
      env: cleanEnv(options.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? 1, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** The environment for a child idem: no inherited config, NATS URL, fault or colour. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...extra };
  for (const k of ["IDEM_CONFIG", "NATS_URL", "IDEM_FAULT", "FORCE_COLOR"]) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

/** A temp workspace: a folder with a config file, removed by `remove()`. */
export interface Workspace {
  dir: string;
  config: string;
  writeConfig(config: unknown): void;
  remove(): void;
}

/**
 * A temp folder with `config` as its idem.config.json and, unless `journal` is false, the SQLite
 * journal the config names made (as `idem init` would: no other command creates one).
 */
export function workspace(config: unknown = {}, options: { journal?: boolean } = {}): Workspace {
  const dir = mkdtempSync(join(tmpdir(), "idem-ops-"));
  const file = join(dir, "idem.config.json");
  const ws: Workspace = {
    dir,
    config: file,
    writeConfig(c) {
      writeFileSync(file, `${JSON.stringify(c, null, 2)}\n`);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  ws.writeConfig(config);
  const journal = (config as { journal?: { path?: string; url?: string } }).journal;
  if (options.journal !== false && journal?.url === undefined) {
    // Closed at once: nothing of it is left open (close answers after the handle is closed).
    void SqliteJournalStore.open(resolve(dir, journal?.path ?? ".idem/journal.db")).close();
  }
  return ws;
}

export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-C", dir, "-c", "maintenance.auto=false", ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "test",
      GIT_AUTHOR_EMAIL: "test@localhost",
      GIT_COMMITTER_NAME: "test",
      GIT_COMMITTER_EMAIL: "test@localhost",
    },
  });
}

/** `git init -b <branch>` with one initial commit. */
export function initRepo(dir: string, branch = "main"): void {
  mkdirSync(dir, { recursive: true });
  gitIn(dir, "init", "-q", "-b", branch);
  writeFileSync(join(dir, "README.md"), "# test\n");
  gitIn(dir, "add", "README.md");
  gitIn(dir, "commit", "-q", "-m", "initial");
}
