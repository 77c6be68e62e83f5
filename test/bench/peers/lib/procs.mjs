// The processes the peers bench starts: each tracked by its PID, its output appended to the bench's
// log file with its name, every one still alive SIGKILLed when the bench exits (by PID, never by
// name), and a poll that waits for a condition with a stated bound.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

/** Every child of the bench still running. */
export const children = new Set();

process.once("exit", () => {
  for (const c of children) {
    try {
      c.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
});

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `argv` without a shell. Its stdout and stderr go to `logFile`, each chunk prefixed with
 * `[name]`; `onLine` sees each stdout line (a worker's "ready", say).
 */
export function start(name, argv, { cwd, env, logFile, onLine } = {}) {
  const [cmd, ...args] = argv;
  const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  child.exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  const log = (d) => {
    if (logFile) appendFileSync(logFile, `[${name}] ${d}`);
  };
  let pending = "";
  child.stdout.on("data", (d) => {
    log(d);
    if (!onLine) return;
    pending += d;
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const l of lines) onLine(l);
  });
  child.stderr.on("data", log);
  child.on("error", (e) => log(`spawn error: ${e.message}\n`));
  return child;
}

/** Whether `child` has not exited yet. */
export const alive = (child) => child.exitCode === null && child.signalCode === null;

/** SIGKILLs `child` (by its PID) and waits until it is gone. */
export async function kill(child, signal = "SIGKILL") {
  if (!alive(child)) return;
  child.kill(signal);
  await child.exited;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when gone. */
export async function stop(child, graceMs = 5000) {
  if (!alive(child)) return;
  child.kill("SIGTERM");
  const t = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await child.exited;
  clearTimeout(t);
}

/**
 * Polls `check` (async, answers a truthy value when done) every `everyMs` until it answers truthy;
 * throws naming `what` after `timeoutMs`.
 */
export async function waitFor(what, check, { timeoutMs = 60_000, everyMs = 100 } = {}) {
  const t0 = Date.now();
  for (;;) {
    let v;
    try {
      v = await check();
    } catch (e) {
      if (Date.now() - t0 > timeoutMs) throw e;
    }
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(everyMs);
  }
}

/** A line from a worker's stdout that it prints once it serves (resolves with the line). */
export function lineWaiter() {
  const waiters = [];
  return {
    onLine(l) {
      for (const w of [...waiters]) {
        if (w.test(l)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
      }
    },
    wait(test, child, what, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const w = { test, resolve: (l) => done(() => resolve(l)) };
        const t = setTimeout(
          () => done(() => reject(new Error(`no ${what} in ${timeoutMs} ms`))),
          timeoutMs,
        );
        const onExit = ({ code, signal }) =>
          done(() => reject(new Error(`${what}: exited (code ${code}, signal ${signal})`)));
        const done = (f) => {
          clearTimeout(t);
          const i = waiters.indexOf(w);
          if (i >= 0) waiters.splice(i, 1);
          f();
        };
        waiters.push(w);
        void child.exited.then(onExit);
      });
    },
  };
}
