import { type ChildProcess, spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createBackoff, sleep } from "@idem/schema";

/** The committed bin shim of this CLI, so children run exactly this build. */
export const IDEM_BIN = resolve(dirname(fileURLToPath(import.meta.url)), "../../bin/idem.js");

export interface IdemChild {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or 128 + signal number style name) when the process ends. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `idem <args>` with this Node and this build, the config passed both as `--config` and as
 * `IDEM_CONFIG`, and every output line handed to `onLine` (prefixed by the caller).
 */
export function spawnIdem(
  name: string,
  args: readonly string[],
  options: {
    config: string | null;
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    onLine?: (name: string, line: string, stream: "stdout" | "stderr") => void;
  },
): IdemChild {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  const fullArgs = [IDEM_BIN, ...args];
  if (options.config !== null) {
    env.IDEM_CONFIG = options.config;
    fullArgs.push("--config", options.config);
  }
  const child = spawn(process.execPath, fullArgs, {
    cwd: options.cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pending: Promise<void>[] = [];
  for (const stream of ["stdout", "stderr"] as const) {
    const rl = createInterface({ input: child[stream] });
    pending.push(new Promise((r) => rl.once("close", () => r())));
    rl.on("line", (line) => options.onLine?.(name, line, stream));
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => {
    child.once("close", (code, signal) => {
      void Promise.all(pending).then(() => r({ code, signal }));
    });
    child.once("error", () => r({ code: 127, signal: null }));
  });
  return { name, child, exited };
}

/** What `supervise` runs and whom it tells. */
export interface SupervisorOptions {
  processes: { name: string; args: string[] }[];
  config: string | null;
  onLine: (name: string, line: string, stream: "stdout" | "stderr") => void;
  onEvent: (message: string) => void;
  /**
   * A process exited with a code that a restart cannot fix (2: usage or invalid config, 3: an
   * invariant violation): it is not restarted and this is called.
   */
  onFatal?: (name: string, code: number) => void;
  /** First restart delay; doubles per quick death up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * A process that ran this long before dying was healthy: it restarts at the first delay again,
   * its backoff reset (default 10 s; a process that cannot start dies within a few).
   */
  healthyAfterMs?: number;
  /** Starts one process (default `spawnIdem`); a test's own. */
  spawn?: (name: string, args: readonly string[]) => IdemChild;
  /** The clock a run's length is measured with (default `Date.now`). */
  now?: () => number;
  /**
   * How long a stopped process gets between SIGTERM and SIGKILL: a last resort, longer than the
   * executor's own stop grace (it kills its agents and gives their jobs back itself).
   */
  stopGraceMs?: number;
}

/**
 * Keeps each process running: one that exits is restarted after a backoff (500 ms, doubling to
 * 30 s while it keeps dying soon after its start; back to 500 ms after a run of 10 s or more, as
 * pm2 resets its backoff after a run that lasted). `stop()` sends SIGTERM to all, waits for
 * them (SIGKILL after the grace period) and resolves when every one has exited.
 */
export function supervise(options: SupervisorOptions): {
  stop(): Promise<void>;
  /** Sends `signal` to every process running now (a second Ctrl-C passed on). */
  signal(signal: NodeJS.Signals): void;
} {
  const backoff = options.backoffMs ?? 500;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  const healthyAfter = options.healthyAfterMs ?? 10_000;
  const now = options.now ?? Date.now;
  const start =
    options.spawn ??
    ((name: string, args: readonly string[]) =>
      spawnIdem(name, args, { config: options.config, onLine: options.onLine }));
  const grace = options.stopGraceMs ?? 15_000;
  let stopping = false;
  const current = new Map<string, IdemChild>();
  const loops: Promise<void>[] = [];
  /** Aborted by `stop()`: a restart delay being waited out ends at once. */
  const stopped = new AbortController();

  for (const p of options.processes) {
    loops.push(
      (async () => {
        const delays = createBackoff({ initialMs: backoff, maxMs: maxBackoff });
        while (!stopping) {
          const started = now();
          const c = start(p.name, p.args);
          current.set(p.name, c);
          options.onEvent(`${p.name} started (pid ${c.child.pid})`);
          const { code, signal } = await c.exited;
          current.delete(p.name);
          if (stopping) {
            options.onEvent(`${p.name} stopped`);
            return;
          }
          if (code === 2 || code === 3) {
            options.onEvent(`${p.name} exited with code ${code}: a restart cannot fix that`);
            options.onFatal?.(p.name, code);
            return;
          }
          if (now() - started >= healthyAfter) delays.reset();
          const delay = delays.next();
          options.onEvent(
            `${p.name} exited (${signal ?? `code ${code}`}); restarting in ${delay} ms`,
          );
          await sleep(delay, stopped.signal);
        }
      })(),
    );
  }

  return {
    signal(signal) {
      for (const c of current.values()) c.child.kill(signal);
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      stopped.abort();
      for (const c of current.values()) c.child.kill("SIGTERM");
      const killer = setTimeout(() => {
        for (const c of current.values()) c.child.kill("SIGKILL");
      }, grace);
      await Promise.all(loops);
      clearTimeout(killer);
    },
  };
}
