// The DBOS Transact side's worker process, written as DBOS's docs show (README and "Learn DBOS
// TypeScript": registerWorkflow, runStep, registerQueue after launch; the client enqueues): one
// workflow per job, `runStep(agent)` then `runStep(commit)`, on the queue `jobs` with a worker
// concurrency of PEERS_CONCURRENCY. Restarted after a SIGKILL, DBOS.launch() recovers this
// executor's pending workflows (its documented recovery). Prints "ready" once launched and
// "inflight-max N" whenever the most workflows running at once grows.
// Environment: DBOS_SYSTEM_DATABASE_URL, PEERS_REPO, PEERS_COMMIT (git | isomorphic-git),
// PEERS_CONCURRENCY, PEERS_DBOS_POLL_MS (the queue's minPollingIntervalMs; DBOS's default without).
import fs from "node:fs";
import { DBOS } from "@dbos-inc/dbos-sdk";
import isogit from "isomorphic-git";
import { commitWithGit, commitWithIsomorphicGit, OUTPUT, serial } from "../lib/workload.mjs";

const repo = process.env.PEERS_REPO;
const mode = process.env.PEERS_COMMIT;
const concurrency = Number(process.env.PEERS_CONCURRENCY ?? 32);
const pollMs = process.env.PEERS_DBOS_POLL_MS ? Number(process.env.PEERS_DBOS_POLL_MS) : undefined;

/** The agent: a fixed 1 KB output (DBOS checkpoints a step's result in its system database). */
async function agent() {
  return OUTPUT;
}
const oneAtATime = serial();
const commit = (id, output) =>
  oneAtATime(() =>
    mode === "isomorphic-git"
      ? commitWithIsomorphicGit(isogit, fs, repo, id, output)
      : commitWithGit(repo, id, output),
  );

let running = 0;
let most = 0;
async function job(id) {
  running += 1;
  if (running > most) {
    most = running;
    process.stdout.write(`inflight-max ${most}\n`);
  }
  try {
    const output = await DBOS.runStep(() => agent(id), { name: "agent" });
    await DBOS.runStep(() => commit(id, output), { name: "commit" });
    return id;
  } finally {
    running -= 1;
  }
}
DBOS.registerWorkflow(job, { name: "job" });

DBOS.setConfig({
  name: "peers-bench",
  applicationVersion: "0.1.0",
  systemDatabaseUrl: process.env.DBOS_SYSTEM_DATABASE_URL,
  logLevel: "warn",
});
await DBOS.launch();
// minPollingIntervalMs: "Base (minimum) polling interval in ms for this queue's dispatch loop
// (default 1000)" (the SDK's RegisterQueueOptions; https://docs.dbos.dev/typescript/reference/queues).
await DBOS.registerQueue("jobs", {
  workerConcurrency: concurrency,
  ...(pollMs ? { minPollingIntervalMs: pollMs } : {}),
});
process.stdout.write("ready\n");

const shutdown = () => {
  void DBOS.shutdown().then(() => process.exit(0));
};
process.once("SIGTERM", shutdown);
process.once("SIGINT", shutdown);
