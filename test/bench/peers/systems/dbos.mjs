// DBOS Transact's side of the peers bench: its system database on the bench's PostgreSQL, one
// worker process (dbos-worker.mjs) supervised like idem's (started again 50-250 ms after it exits:
// DBOS.launch() then recovers its pending workflows), the jobs enqueued with DBOSClient.enqueue
// (workflow ID = job ID), the final state read with DBOSClient.listWorkflows.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { lineWaiter, start } from "../lib/procs.mjs";
import { GIT_ENV, seedRepo } from "../lib/workload.mjs";
import { supervised } from "./supervised.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const SETTLED = new Set(["SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"]);

/**
 * @param {object} o
 * @param {string} o.dir this run's folder
 * @param {"git" | "isomorphic-git"} o.commit how the commit step commits
 * @param {string} o.pgUrl the system database (created empty by the bench)
 * @param {number} o.concurrency the queue's worker concurrency
 * @param {string} o.logFile
 * @param {() => number} o.random
 * @param {number} [o.pollMs] the queue's `minPollingIntervalMs` (DBOS's default, 1,000, without)
 * @param {() => number} [o.pgPid] the bench's PostgreSQL server (its CPU is DBOS's system database's)
 */
export function dbosSystem({ dir, commit, pgUrl, concurrency, logFile, random, pollMs, pgPid }) {
  const repo = join(dir, "repo");
  let client;
  let inflightMax = 0;
  const env = {
    ...process.env,
    ...GIT_ENV,
    DBOS_SYSTEM_DATABASE_URL: pgUrl,
    PEERS_REPO: repo,
    PEERS_COMMIT: commit,
    PEERS_CONCURRENCY: String(concurrency),
    ...(pollMs ? { PEERS_DBOS_POLL_MS: String(pollMs) } : {}),
  };
  const worker = supervised("dbos", random, async () => {
    const lines = lineWaiter();
    const child = start("dbos", [process.execPath, join(here, "dbos-worker.mjs")], {
      cwd: dir,
      env,
      logFile,
      onLine: (l) => {
        const m = /^inflight-max (\d+)/.exec(l);
        if (m) inflightMax = Math.max(inflightMax, Number(m[1]));
        lines.onLine(l);
      },
    });
    await lines.wait((l) => l === "ready", child, "DBOS worker ready", 120_000);
    return child;
  });
  return {
    repo,
    label: `DBOS, ${commit === "git" ? "git command" : "isomorphic-git"}${pollMs ? `, minPollingIntervalMs ${pollMs}` : ""}`,
    async start() {
      seedRepo(repo);
      await worker.start();
      const { DBOSClient } = await import("@dbos-inc/dbos-sdk");
      client = await DBOSClient.create({ systemDatabaseUrl: pgUrl });
    },
    /** Every job enqueued at once (DBOSClient.enqueue, workflow ID = job ID). */
    async submit(ids) {
      await Promise.all(
        ids.map((id) =>
          client.enqueue({ workflowName: "job", queueName: "jobs", workflowID: id }, id),
        ),
      );
    },
    killOne: () => worker.kill(),
    /** Workflows settled (SUCCESS, ERROR, CANCELLED, MAX_RECOVERY_ATTEMPTS_EXCEEDED) out of `n`. */
    async state(n) {
      const all = await client.listWorkflows({});
      const by = {};
      for (const w of all) by[w.status] = (by[w.status] ?? 0) + 1;
      const settled = all.filter((w) => SETTLED.has(w.status)).length;
      const failed = all.filter((w) => SETTLED.has(w.status) && w.status !== "SUCCESS").length;
      const errors = [
        ...new Set(
          all
            .filter((w) => w.status === "ERROR")
            .map((w) =>
              String(w.error?.message ?? w.error)
                .split("\n")[0]
                .slice(0, 160),
            ),
        ),
      ].slice(0, 3);
      return {
        settled: Math.min(settled, n),
        failed,
        detail: `workflows ${JSON.stringify(by)}${errors.length ? `; errors: ${errors.join(" | ")}` : ""}`,
      };
    },
    inflightMax: () => inflightMax,
    restarts: () => worker.restarts(),
    /** The worker process and the PostgreSQL server that holds DBOS's system database. */
    cpuRoots: () => [worker.pid(), pgPid?.()],
    async stop() {
      await worker.stop();
      await client?.destroy();
    },
  };
}
