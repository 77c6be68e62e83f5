// The text of the peers' section of BENCHMARKS.md: the machine, the versions, the exact workload,
// how each system runs and what the bench had to do to run it, the throughput table and the crash
// table (lib/section.mjs renders the tables and places the section).
import { execFileSync } from "node:child_process";
import { fmt } from "../../lib/measure.mjs";
import { ROOT } from "../../lib/plain.mjs";
import { goalLines } from "./goals.mjs";
import { BEGIN, bestTable, crashTable, END, throughputTable } from "./section.mjs";

const rev = () => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
  } catch {
    return "?";
  }
};

/** Runs whose repository or state was not what a clean run leaves, for the notes. */
function anomalies(results) {
  const out = [];
  for (const [name, runs] of Object.entries(results.details)) {
    runs.forEach((r, i) => {
      const label = `${results.labels[name] ?? name}, round ${i + 1}`;
      if (r.error) out.push(`${label}: failed: ${r.error}`);
      else if (r.audit.duplicates.length || r.audit.missing.length || r.audit.foreign.length)
        out.push(
          `${label}: ${r.audit.duplicates.length} duplicated, ${r.audit.missing.length} missing, ${r.audit.foreign.length} holding another job's file`,
        );
      else if (r.state.settled < results.jobs + 1)
        out.push(`${label}: all commits made, but the system says: ${r.state.detail}`);
    });
  }
  return out;
}

/** The whole section, markers included. */
export function section(results, m) {
  const { jobs: n, rounds, concurrency: k, versions: v, seed, kills } = results;
  const inflight = {};
  for (const [name, runs] of Object.entries(results.details)) {
    const most = runs.map((r) => r.inflightMax).filter((x) => typeof x === "number");
    if (most.length) inflight[name] = Math.max(...most);
  }
  const odd = anomalies(results);
  const lines = [
    BEGIN,
    "## Peers: idem next to DBOS Transact and Restate",
    "",
    "Written by `npm run bench:peers` (test/bench/peers/run.mjs, issue 35); `npm run bench` keeps this",
    "section as it is. Every figure comes from one run on this machine, all systems in the same rounds.",
    "",
    `Run: ${results.date}, idem at ${results.rev ?? rev()}, seed ${seed}.`,
    "",
    `- ${m.cpus}; Node ${m.node}; ${m.git}; ${m.postgres} (a disposable server of the bench's own, packages/testing's startPostgres: fsync, synchronous_commit and full_page_writes on)`,
    `- DBOS Transact ${v["DBOS Transact"]} (\`@dbos-inc/dbos-sdk\`); Restate server ${v["Restate server"]} (\`@restatedev/restate-server\`, its linux-x64 binary: ${m.restate}); Restate TypeScript SDK ${v["Restate SDK"]} (\`@restatedev/restate-sdk\`); isomorphic-git ${v["isomorphic-git"]}`,
    "",
    "**The workload**, the same for every system: " +
      `${n} jobs, each an agent step that returns a fixed 1 KB output (1,024 bytes), recorded durably by the system, then one git commit of one file (\`jobs/<job ID>.txt\`, holding that output) onto \`main\` of a local repository (a fresh one per run, with one seed commit). ` +
      `All jobs handed in at once (for Restate: ${k} calls open at once, below), ${k} in flight. Each run starts its system afresh (repository, journal or database, data folder), puts one warm-up job through it untimed, then times from the start of the submission until the last job's commit is on \`main\` (\`git rev-list --count main\` polled every 100 ms, for every system alike), then checks the repository (one commit per job, each holding its own file) and reads the system's own final state.`,
    "",
    "How each system runs:",
    "",
    `- **idem**: an executor and its built CLI's \`idem interpreter\`, under the chaos drill's supervisor (test/chaos/lib/supervisor.mjs). The agent step runs in the executor's process, as the peers' steps run in theirs: the executor is \`createExecutor\` with its \`run\` option (docs/agents.md, "An in-process agent"; test/bench/peers/systems/idem-executor.mjs), a function that returns the AgentOutput, a \`git.commit\` effect of the file. The row "command agent" runs \`idem executor --no-api\` with a command agent instead (\`sh ./agent.sh\`: one \`printf\` of the same AgentOutput), a process spawned per job, which the peers do not pay. The interpreter runs with the supervisor's \`--concurrency 2\` (every effect is on one branch here, so its runs apply in recording order whatever the concurrency: the applies of the pipeline's runs, \`interpreter.pipeline\`, that wait at once go out as one batch, one ref transaction: docs/reliability.md, "Group commit on a local branch"). The jobs handed in with one \`idem enqueue FILE --concurrency 32\` on the embedded queue (that process's start is timed too). \`queue.maxAckPending: ${results.idem.maxAckPending}\` (idem's default since issue 35; it was 1, one agent at a time, when the issue was filed); ${results.idem.leaseMs ? `\`queue.ackWaitMs\` and \`interpreter.leaseMs\` ${results.idem.leaseMs} ms (--idem-lease-ms), everything else idem's defaults` : "everything else idem's defaults (`journal.synchronous` FULL, `interpreter.leaseMs` 5 s, `queue.ackWaitMs` 300 s)"}. The SQLite journal in the workspace, or the PostgreSQL journal in a database of its own on the bench's server. idem's commits are durable (objects and refs fsynced); the peers' and the plain loop's are git's default (no fsync).`,
    `- **DBOS Transact**, as its docs show (README, "Learn DBOS TypeScript", the DBOS Client reference): one worker process (test/bench/peers/systems/dbos-worker.mjs), \`DBOS.registerWorkflow\` of a workflow that calls \`DBOS.runStep(agent)\` then \`DBOS.runStep(commit)\`, \`DBOS.registerQueue("jobs", { workerConcurrency: ${k} })\` after \`DBOS.launch()\`; the jobs enqueued with \`DBOSClient.enqueue\` (workflow ID = job ID); its system database on the bench's PostgreSQL; DBOS's defaults otherwise: steps are not retried, and the queue's dispatcher polls it about once a second (\`minPollingIntervalMs\`, default 1,000, with jitter), so a finished workflow's slot is refilled at the next poll. **Tuned** (the rows "minPollingIntervalMs ${results.tuned?.dbosPollMs ?? 50}"): the same with \`DBOS.registerQueue("jobs", { workerConcurrency: ${k}, minPollingIntervalMs: ${results.tuned?.dbosPollMs ?? 50} })\`, the queue option DBOS documents for this (the queues reference, https://docs.dbos.dev/typescript/reference/queues: \`RegisterQueueOptions.minPollingIntervalMs\`; the SDK's own comment: "Base (minimum) polling interval in ms for this queue's dispatch loop (default 1000)"). Workflows started without a queue (\`DBOS.startWorkflow\` in the worker's own process) are not a row: DBOS documents queues as the way to bound how many run at once (the same reference: "Queues are useful for controlling the number of workflows run in parallel"), not as slower, and the bench's client (\`DBOSClient\`) can only enqueue.`,
    `- **Restate**, as its docs show (the SDK README, "Services", HTTP invocation, deployment registration): \`restate-server\` with its defaults but for its ports, its data folder, \`log-filter\` and \`disable-telemetry = true\`; the service deployment a Node process (test/bench/peers/systems/restate-service.mjs: \`restate.service\` whose handler runs \`ctx.run("agent")\` then \`ctx.run("commit")\`, \`restate.serve\`) registered over the admin API; the jobs sent over the ingress as request-response calls, \`POST /jobs/run\` with \`idempotency-key: <job ID>\`, ${k} calls open at once (the next sent when one answers). Restate has no queue-level bound like DBOS's: its \`worker.invoker.concurrent-invocations-limit\` (1,000 by default) holds per partition (\`default-num-partitions\`, 24 by default), and set to ${k} alone it let ~490 of the 500 handlers run at once in a first run of this bench, so by default the client bounds them. **Tuned** (the rows "${results.tuned?.restateInvoker?.partitions ?? 1} partition, invoker limit ${k}"): the server bounds them instead, with \`default-num-partitions = ${results.tuned?.restateInvoker?.partitions ?? 1}\` and \`[worker.invoker] concurrent-invocations-limit = ${k}\` (both in Restate's server configuration reference, https://docs.restate.dev/references/server_config), and every call sent at once: the invoker starts the next invocation as one ends, without a round trip to the client, and one partition is less work for a 2-core machine than 24.`,
    "- **The peers' commit step** (and the plain loop's), written twice: with the git command (write the file, `git add` it, `git commit -m \"job <job ID>\"`, each with `execFile`) and with isomorphic-git (write the file, `git.add`, `git.commit`). Within a process the commits run one at a time (an in-process queue): git cannot commit twice at once in one working tree, and idem orders its commits per branch the same way. Nothing else is added to the peers' code beyond what their docs show: no check of what a step already did, no retry of their own.",
    "- **The plain loop**: one Node process, the jobs one after another, the same git-command commit, nothing recorded.",
    "",
    "What the bench had to do to run each one:",
    "",
    "- All peers: installed by the bench into test/bench/peers/node_modules (`npm ci` with that folder's own package.json and package-lock.json), never as dependencies of idem's packages. `@scarf/scarf` (an install-time reporter pulled in by `@restatedev/restate-server`) is not allowed to run its install script (that folder's `allowScripts`).",
    "- Restate: the SDK calls `Promise.withResolvers`, which Node 20 lacks (every invocation fails with `TypeError: Promise.withResolvers is not a function` without it): the service process alone is started with `node --import ./with-resolvers.mjs`, a 10-line polyfill (test/bench/peers/systems/with-resolvers.mjs). The server binary is run directly (not through the package's Node wrapper), so that a signal reaches it. At start it looks up `api.github.com` for its release check (unconditional: no setting turns it off); here that lookup fails, it logs an error and carries on.",
    "- DBOS Transact: nothing beyond its docs.",
    "",
    "### Throughput",
    "",
    `jobs/s = ${n} / seconds from the submission's start to the last commit. Rounds: ${rounds}, interleaved (every system once per round, the order reversed every other round), no warm-up round (each run warms itself up with one job). A ratio is the median of the per-round ratios (each round's idem figure over the same round's figure of that system; every round's ratio in brackets): above 1, idem did more jobs per second. On a shared, busy machine a system's figure moves by 2x and more from round to round (other work comes and goes between runs minutes apart): read the per-round ratios, and the spread between them, rather than one figure. Most in flight: the most workflows or handlers seen running at once in the peer's process (DBOS, Restate).`,
    "",
    ...(Object.keys(results.rates).length
      ? throughputTable(results.rates, results.labels, inflight, results.details)
      : ["Not run this time (--skip-throughput)."]),
    "",
    "CPU per job: the user and system CPU time of every process of the system, from the start of the submission until the last commit, over the jobs, read from `/proc/<pid>/stat` (utime + stime of each process and cutime + cstime, what it reaped: the `git` processes a worker spawned count in it): idem's executor and interpreter and its `idem enqueue` process (reported by a shell that waits for it); DBOS's worker; Restate's server and service deployment; the plain loop's process; and for the systems whose state is in PostgreSQL (idem PostgreSQL, DBOS) the bench's PostgreSQL server, all its processes (the backends, the WAL writer, the checkpointer). The bench's own client calls (DBOS's `DBOSClient.enqueue`, Restate's ingress calls, the `git rev-list` polls) are not counted for anyone.",
    "",
    ...cpuPartsLines(results),
    ...(results.details && Object.keys(results.rates).length
      ? bestTable(results.rates, results.labels, results.details)
      : []),
    "",
    ...goalLines(results),
    ...(results.load?.length
      ? [
          `Load average (1 minute) as each run started: median ${fmt([...results.load].sort((a, b) => a - b)[Math.floor(results.load.length / 2)])}, from ${fmt(Math.min(...results.load))} to ${fmt(Math.max(...results.load))} (2 cores, shared with other engineers' work: the ratios within a round are what count).`,
          "",
        ]
      : []),
    ...(odd.length ? ["Runs that did not end clean:", "", ...odd.map((o) => `- ${o}`), ""] : []),
    "### Crash run",
    "",
    `Per system one run of ${n} jobs as above with ${kills} SIGKILLs of its worker processes, each when the commits on \`main\` reach a point drawn from the seed (between 5% and 90% of the jobs, then 0-200 ms later; or 60 s after the previous kill if the commits stop moving). The peers at their tuned setting (the crash path does not depend on it). Killed: for idem the executor or the interpreter (drawn at random), for DBOS its worker process, for Restate its service deployment (the server itself is not killed). Each is started again 50-250 ms after it dies, as its docs say to recover: idem's processes as the drill's supervisor (and \`idem up\`) do, DBOS's process (\`DBOS.launch()\` recovers its pending workflows), Restate's deployment on the same port (the server retries its invocations). Then the bench waits until every job has settled in the system (idem: run done or dead, or dead-lettered; DBOS: workflow SUCCESS, ERROR, CANCELLED or MAX_RECOVERY_ATTEMPTS_EXCEEDED; Restate: invocation completed, with success or failure), or until nothing has moved for ${results.stall ?? "the stall bound"}.`,
    "",
    ...(Object.keys(results.crash).length
      ? crashTable(results.crash, results.labels)
      : ["Not run this time (--skip-crash)."]),
    "",
    "Duplicated jobs: jobs with more than one commit on `main`. Missing jobs: jobs whose file is not on `main` or that have no commit of their own. Commits holding another job's file: a job's commit whose changes include a file of another job. Repository: `git fsck`'s verdict and whether `.git/index.lock` was left behind. Last kill → all settled: the time from the last SIGKILL until every job had settled (idem's restarted process, on the same host, finds the killed one's leases held by a provably dead process and takes its runs and jobs over at once, without waiting out `interpreter.leaseMs` or `queue.ackWaitMs`: docs/reliability.md, A dead holder).",
    END,
  ];
  return lines.join("\n");
}

/** Where idem's CPU per job goes in this workload: its parts' medians over the rounds. */
function cpuPartsLines(results) {
  const lines = [];
  for (const name of ["idem-sqlite", "idem-postgres"]) {
    const runs = (results.details?.[name] ?? []).filter((r) => r.cpuPartsMs);
    if (runs.length === 0) continue;
    const keys = Object.keys(runs[0].cpuPartsMs);
    const med = (k) => {
      const xs = runs.map((r) => r.cpuPartsMs[k]).sort((a, b) => a - b);
      return xs[Math.floor(xs.length / 2)];
    };
    const parts = keys.map((k) => `${k} ${fmt(med(k))}`).join(", ");
    lines.push(
      `- ${results.labels[name]}: CPU ms per job by process (median of the rounds): ${parts}.`,
    );
  }
  return lines.length
    ? [
        "Where idem's CPU per job goes (the same measure, process by process; `submission` is `idem enqueue`, a Node process started once per run):",
        "",
        ...lines,
        "",
      ]
    : [];
}
