// The built CLI, run as a real process by the kinds' crash tests (IDEM_FAULT armed, SIGKILL).
import { execFile, execFileSync } from "node:child_process";
import { join, resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "../../../..");
const IDEM = join(REPO_ROOT, "apps/cli/bin/idem.js");

/** `tsc -b apps/cli`, so the suite runs the CLI of this tree. */
export function buildCli(): void {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "pipe" });
}

/** How a run of the CLI ended. */
export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `idem <args> --config <dir>/idem.config.json` in `dir`, with `env` added. */
export function idem(dir: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [IDEM, ...args, "--config", join(dir, "idem.config.json")],
      { cwd: dir, env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const e = error as (Error & { code?: number; signal?: NodeJS.Signals }) | null;
        done({
          code: e ? (typeof e.code === "number" ? e.code : null) : 0,
          signal: e?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
  });
}

/** What `idem show <job> --json` says of a job's runs, effects and events. */
export interface Shown {
  runs: { state: string }[];
  effects: { key: string; state: string }[];
  events: { type: string }[];
}
