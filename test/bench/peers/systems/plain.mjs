// The plain loop's side: one process (plain-loop.mjs) that runs the jobs one after another.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCounted } from "../lib/cpu.mjs";
import { GIT_ENV, seedRepo } from "../lib/workload.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));

/** @param {{ dir: string, logFile: string }} o */
export function plainSystem({ dir, logFile }) {
  const repo = join(dir, "repo");
  let counted = 0;
  return {
    repo,
    label: "plain loop, git command (no engine)",
    async start() {
      seedRepo(repo);
    },
    /** Starts the loop over `ids`; resolves when it has exited 0. */
    async submit(ids) {
      const argv = [process.execPath, join(here, "plain-loop.mjs"), repo, ...ids];
      const r = await runCounted(argv, { cwd: dir, env: { ...process.env, ...GIT_ENV } });
      if (r.stdout || r.stderr) appendFileSync(logFile, `[plain] ${r.stdout}${r.stderr}`);
      counted += r.cpuSeconds ?? 0;
      if (r.code !== 0) throw new Error(`plain loop exited ${r.code}`);
    },
    /** The loop is a process that ends within its run: its CPU is reported as it exits. */
    cpuRoots: () => [],
    cpuCounted: () => counted,
    async state(n) {
      return { settled: n, failed: 0, detail: "no engine: nothing recorded" };
    },
    async stop() {},
  };
}
