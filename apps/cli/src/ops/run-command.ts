import { execFile } from "node:child_process";

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program without a shell and resolves with its exit code and output; never rejects for a
 * non-zero exit (the caller decides what it means). Rejects only when the program cannot start.
 */
export function runCommand(
  program: string,
  args: readonly string[],
  options: { cwd?: string; timeoutMs?: number; maxBuffer?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      program,
      [...args],
      {
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 30_000,
        maxBuffer: options.maxBuffer ?? 256 * 1024 * 1024,
        encoding: "utf8",
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

/** `git -C dir ...args`, with maintenance off so no background process is left behind. */
export function git(dir: string, args: readonly string[]): Promise<CommandResult> {
  return runCommand("git", ["-C", dir, "-c", "maintenance.auto=false", ...args]);
}
