// How a drill ends, whatever ends it (its verdict, an abandon, SIGTERM, SIGINT, a stray error): one
// teardown that stops the supervisor's restarts, kills every process it started, stops every server,
// removes the network, and last kills any process still carrying this run's mark (an agent whose
// executor was SIGKILLed, a server's watchdog): nothing of the drill outlives it (issue 42, item 9).
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/** The environment variable every process of one drill run inherits, with the run's ID. */
export const DRILL_RUN_ENV = "IDEM_DRILL_RUN";

/** How long one cleanup step may take before the next one runs anyway. */
const STEP_MS = 30_000;

/**
 * The PIDs of the processes that carry `IDEM_DRILL_RUN=<runId>` in their environment (read from
 * /proc; a process that cannot be read, or has gone meanwhile, is skipped), this one excluded.
 */
export function markedProcesses(runId) {
  const mark = `${DRILL_RUN_ENV}=${runId}`;
  const found = [];
  let entries = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return found;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${e}/environ`, "latin1").split("\0");
      if (env.includes(mark)) found.push(Number(e));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/**
 * Marks this process's run (its children inherit the mark) and returns the teardown:
 * `add(name, step)` registers a cleanup (run in reverse order, each bounded by STEP_MS, a failure
 * logged and the rest run anyway); `halt(fn)` the supervisor's stop, run first; `run()` runs it all
 * once (later calls answer the same promise).
 */
export function createTeardown({ log }) {
  const runId = randomUUID();
  process.env[DRILL_RUN_ENV] = runId;
  const steps = [];
  let halt = async () => {};
  let running;
  const bounded = (name, fn) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} took over ${STEP_MS} ms`)), STEP_MS);
      Promise.resolve()
        .then(fn)
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  return {
    runId,
    add(name, fn) {
      steps.push({ name, fn });
    },
    halt(fn) {
      halt = fn;
    },
    run() {
      running ??= (async () => {
        for (const { name, fn } of [{ name: "processes", fn: halt }, ...[...steps].reverse()]) {
          try {
            await bounded(name, fn);
          } catch (e) {
            log(`teardown: ${name}: ${e?.message ?? e}`);
          }
        }
        // Last: whatever of this run is still alive (reparented, detached), by its PID.
        for (let round = 0; round < 5; round++) {
          const left = markedProcesses(runId);
          if (left.length === 0) break;
          for (const pid of left) {
            try {
              process.kill(pid, "SIGCONT");
              process.kill(pid, "SIGKILL");
            } catch {
              // gone meanwhile
            }
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      return running;
    },
  };
}

/**
 * Ends the drill through `teardown` with exit 2 on SIGINT, SIGTERM, an uncaught error or an
 * unhandled rejection (a stray error would otherwise end it with exit 1, a violation's code,
 * leaving servers and the network behind). Listeners stay on: a second signal during the
 * teardown does not cut it short.
 */
export function endThroughTeardown(teardown, log) {
  const end = (why) => {
    log(why);
    teardown.run().finally(() => process.exit(2));
  };
  for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => end(`${s}: stopping`));
  process.on("uncaughtException", (e) => end(`drill failed (uncaught): ${e?.stack ?? e}`));
  process.on("unhandledRejection", (e) => end(`drill failed (unhandled): ${e?.stack ?? e}`));
  return end;
}
