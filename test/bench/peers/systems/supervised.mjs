// A peer's worker process under the same supervision as idem's (test/chaos/lib/supervisor.mjs): it
// is started again 50-250 ms (drawn from the run's generator) after it exits, as a process manager
// (systemd, a container runtime) restarts a service. Each peer's own recovery then does the rest.
import { alive, stop as stopChild } from "../lib/procs.mjs";

/**
 * @param {string} name for the log
 * @param {() => number} random
 * @param {() => Promise<import("node:child_process").ChildProcess>} startOne starts the process and
 *   resolves once it serves (rejects when it exits first)
 */
export function supervised(name, random, startOne) {
  let child;
  let stopping = false;
  let restarts = 0;
  const again = () => {
    if (stopping) return;
    setTimeout(
      () => {
        if (stopping) return;
        restarts += 1;
        void launch().catch((e) => {
          process.stderr.write(`peers: ${name} did not start again: ${e.message}\n`);
          again();
        });
      },
      50 + Math.floor(random() * 200),
    );
  };
  async function launch() {
    const c = await startOne();
    child = c;
    void c.exited.then(() => {
      if (child === c) again();
    });
    if (!alive(c)) again();
  }
  return {
    start: launch,
    /** SIGKILLs the process if it runs (answers whether it did). */
    kill() {
      if (!child || !alive(child)) return false;
      child.kill("SIGKILL");
      return true;
    },
    restarts: () => restarts,
    /** The PID of the process now running (for its CPU), if any. */
    pid: () => (child && alive(child) ? child.pid : undefined),
    async stop() {
      stopping = true;
      if (child) await stopChild(child);
    },
  };
}
