import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The built CLI: the browser suite needs `npm run build` first. */
export const IDEM_BIN = resolve(dirname(fileURLToPath(import.meta.url)), "../../cli/bin/idem.js");

/** The environment of a child idem: no inherited config, NATS URL, fault or colour. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...extra };
  for (const k of ["IDEM_CONFIG", "NATS_URL", "IDEM_FAULT", "FORCE_COLOR", "IDEM_JOURNAL_URL"]) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

/** Runs the real CLI and answers its exit code and output. */
export function idem(
  args: string[],
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [IDEM_BIN, ...args], {
      cwd: options.cwd,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, stdout, stderr });
    });
  });
}

/** The JSON a CLI command prints, or a failure with its stderr. */
export async function idemJson<T>(args: string[], cwd: string): Promise<T> {
  const r = await idem([...args, "--json"], { cwd });
  if (r.code !== 0 && r.stdout.trim() === "")
    throw new Error(`idem ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** A running `idem console` child and its URL. */
export interface ConsoleChild {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `idem console --port 0 ...` and waits for the line naming its URL (60 s at most). */
export function startConsoleChild(args: string[], cwd: string): Promise<ConsoleChild> {
  const child = spawn(process.execPath, [IDEM_BIN, "console", "--port", "0", ...args], {
    cwd,
    env: cleanEnv({ IDEM_ACTOR: "oncall" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((r) => child.once("close", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((done, fail) => {
    let out = "";
    const timer = setTimeout(() => {
      void stop();
      fail(new Error(`idem console did not say its URL in 60 s: ${out}`));
    }, 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /idem console: (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        done({ url: m[1], child, stop });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("close", (code) => {
      clearTimeout(timer);
      fail(new Error(`idem console exited ${code}: ${out}`));
    });
  });
}

export function git(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-C", dir, ...args], { encoding: "utf8" });
}

/** Polls `check` until it holds (60 s at most), naming what it waited for. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
