// The plain loop's side: one process (plain-loop.mjs) that runs the jobs one after another.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { start } from "../lib/procs.mjs";
import { GIT_ENV, seedRepo } from "../lib/workload.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));

/** @param {{ dir: string, logFile: string }} o */
export function plainSystem({ dir, logFile }) {
  const repo = join(dir, "repo");
  const runs = [];
  return {
    repo,
    label: "plain loop, git command (no engine)",
    async start() {
      seedRepo(repo);
    },
    /** Starts the loop over `ids`; resolves when it has exited 0. */
    async submit(ids) {
      const argv = [process.execPath, join(here, "plain-loop.mjs"), repo, ...ids];
      const child = start("plain", argv, {
        cwd: dir,
        env: { ...process.env, ...GIT_ENV },
        logFile,
      });
      runs.push(child);
      const { code, signal } = await child.exited;
      if (code !== 0) throw new Error(`plain loop exited ${code ?? signal}`);
    },
    async state(n) {
      return { settled: n, failed: 0, detail: "no engine: nothing recorded" };
    },
    async stop() {},
  };
}
