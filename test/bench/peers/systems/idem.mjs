// idem's side of the peers bench, driven through its own built CLI as a user runs it: a workspace
// (idem.config.json, the repository, an agent), an executor and `idem interpreter` under the chaos
// drill's supervisor (test/chaos/lib/supervisor.mjs: each started again 50-250 ms after it exits,
// no fault point armed), the jobs handed in with `idem enqueue FILE` on the embedded queue, the
// final state read with `idem status --json`. The journal is SQLite (FULL, the default) or
// PostgreSQL (a database of its own on the bench's server).
import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createSupervisor } from "../../../chaos/lib/supervisor.mjs";
import { ROOT } from "../../lib/plain.mjs";
import { runCounted } from "../lib/cpu.mjs";
import { children } from "../lib/procs.mjs";
import { fileOf, messageOf, OUTPUT, seedRepo } from "../lib/workload.mjs";

const run = promisify(execFile);
const IDEM = join(ROOT, "apps/cli/bin/idem.js");
/** The executor with the agent step in process (idem-executor.mjs), as the peers' steps are. */
const IN_PROCESS_EXECUTOR = fileURLToPath(new URL("./idem-executor.mjs", import.meta.url));

/** The idem settings the bench states with its tables (the rest are idem's defaults). */
export const IDEM_SETTINGS = { maxAckPending: 16 };

/**
 * The command agent: one `sh` that prints the AgentOutput, a git.commit of jobs/<jobId>.txt holding
 * the fixed 1 KB output (the job on stdin is not needed: its ID is in IDEM_JOB_ID).
 */
function agentScript() {
  const effect = {
    kind: "git.commit",
    repo: "site",
    message: messageOf("%s"),
    files: [{ path: fileOf("%s"), content: "%s" }],
  };
  const format = JSON.stringify({ summary: "1 KB", effects: [effect] });
  const content = JSON.stringify(OUTPUT).slice(1, -1); // JSON-escaped, printed by %s as is
  return `#!/bin/sh\nprintf '${format}' "$IDEM_JOB_ID" "$IDEM_JOB_ID" '${content}'\n`;
}

/**
 * @param {object} o
 * @param {string} o.dir this run's folder (the workspace is made in it)
 * @param {"sqlite" | "postgres"} o.journal
 * @param {string} [o.pgUrl] the journal's database (for "postgres")
 * @param {string} o.logFile
 * @param {() => number} o.random the run's seeded generator (restart delays, the process killed)
 * @param {number} [o.leaseMs] queue.ackWaitMs and interpreter.leaseMs instead of idem's defaults
 * @param {"in-process" | "command"} [o.agent] the agent step: a function in the executor's
 *   process (idem-executor.mjs, like the peers' steps; the default) or a command agent that
 *   `idem executor --no-api` spawns per job (`sh ./agent.sh`)
 * @param {() => number} [o.pgPid] the bench's PostgreSQL server (its CPU is the journal's)
 */
export function idemSystem({
  dir,
  journal,
  pgUrl,
  logFile,
  random,
  leaseMs,
  agent = "in-process",
  pgPid,
}) {
  const repo = join(dir, "repo");
  const configFile = join(dir, "idem.config.json");
  let sup;
  let counted = 0;
  const idem = async (...args) => {
    const { stdout } = await run(process.execPath, [IDEM, ...args, "--config", configFile], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: "1", IDEM_LOG_LEVEL: "warn" },
      maxBuffer: 1 << 26,
    });
    return stdout;
  };
  const enqueue = async (ids) => {
    const file = join(dir, `jobs-${ids[0]}.jsonl`);
    const lines = ids.map((jobId) => JSON.stringify({ jobId, agent: "writer", input: {} }));
    writeFileSync(file, `${lines.join("\n")}\n`);
    // Its CPU is the system's too: run under a shell that reports it.
    const r = await runCounted(
      [process.execPath, IDEM, "enqueue", file, "--concurrency", "32", "--config", configFile],
      { cwd: dir, env: { ...process.env, NO_COLOR: "1", IDEM_LOG_LEVEL: "warn" } },
    );
    if (r.code !== 0) throw new Error(`idem enqueue exited ${r.code}: ${r.stderr.slice(0, 400)}`);
    counted += r.cpuSeconds ?? 0;
  };
  return {
    repo,
    label: `${journal === "sqlite" ? "idem, SQLite journal" : "idem, PostgreSQL journal"}${agent === "command" ? ", command agent" : ""}`,
    workers: () => ["executor", "interpreter"],
    async start() {
      seedRepo(repo);
      writeFileSync(join(dir, "agent.sh"), agentScript());
      const config = {
        journal: journal === "sqlite" ? { path: ".idem/journal.db" } : { url: pgUrl },
        repos: { site: { path: "repo" } },
        agents: { writer: { command: ["sh", "./agent.sh"], timeoutMs: 60_000 } },
        queue: { maxAckPending: IDEM_SETTINGS.maxAckPending },
      };
      if (leaseMs) {
        // --idem-lease-ms (the harness test): shorter leases than idem's defaults.
        config.queue.ackWaitMs = leaseMs;
        config.interpreter = { leaseMs };
      }
      writeFileSync(configFile, JSON.stringify(config, null, 2));
      await idem("init", "--journal"); // the journal, created before two processes open it
      sup = createSupervisor({
        idem: IDEM,
        logFile,
        random,
        kills: 0,
        children,
        log: (m) => process.stderr.write(`peers: ${m}\n`),
        spawn: (_host, argv, options) => {
          // argv: [idem, "executor", "--no-api", "--config", FILE]
          const inProcess = agent === "in-process" && argv[1] === "executor";
          const args = inProcess ? [IN_PROCESS_EXECUTOR, ...argv.slice(-2)] : argv;
          return spawn(process.execPath, args, options);
        },
      });
      sup.startAll([{ name: "idem", dir, configFile }]);
    },
    /** Every job handed in at once: one `idem enqueue` of the whole file (32 in flight). */
    submit: enqueue,
    /** SIGKILLs one of the executor and the interpreter, picked by the run's generator. */
    killOne() {
      const before = sup.tally.controllerKills;
      sup.killOne();
      return sup.tally.controllerKills > before;
    },
    /** Jobs settled (run done or dead, or dead-lettered) out of `n`, and what the journal says. */
    async state(n) {
      const s = JSON.parse(await idem("status", "--json"));
      const settled = s.runs.done + s.runs.dead + s.deadLetters;
      return {
        settled: Math.min(settled, n),
        failed: s.runs.dead + s.deadLetters,
        detail: `runs ${JSON.stringify(s.runs)}, dead letters ${s.deadLetters}, effects ${JSON.stringify(s.effects)}`,
      };
    },
    restarts: () => sup?.tally.restarts ?? 0,
    /** The executor's and the interpreter's PIDs, and the PostgreSQL server's for that journal. */
    cpuRoots: () => [
      ...[...(sup?.procs.values() ?? [])].map((p) => p.child.pid),
      ...(journal === "postgres" && pgPid ? [pgPid()] : []),
    ],
    cpuCounted: () => counted,
    /** The same, part by part. */
    cpuParts() {
      const pidOf = (kind) =>
        [...(sup?.procs.values() ?? [])].filter((p) => p.kind === kind).map((p) => p.child.pid);
      return {
        executor: pidOf("executor"),
        interpreter: pidOf("interpreter"),
        ...(journal === "postgres" && pgPid ? { postgres: [pgPid()] } : {}),
      };
    },
    async stop() {
      await sup?.stopAll();
    },
  };
}
