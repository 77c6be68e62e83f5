// idem's executor for the peers bench with the agent step in process, as the peers' agent steps
// are (DBOS's `runStep(agent)`, Restate's `ctx.run("agent")`): `createExecutor` with its `run`
// option (docs/agents.md, "An in-process agent"), on the config's journal and embedded queue,
// everything else as `idem executor --no-api` runs it. The agent returns the same output as the
// command agent's `agent.sh`: a git.commit of jobs/<jobId>.txt holding the fixed 1 KB output.
// Usage: node idem-executor.mjs --config FILE   (SIGTERM or SIGINT: drains and exits 0)
// IDEM_BENCH_REPOS=N (the scaling bench): job-<i> commits to the repository alias repoOf(i, N)
// instead of "site".
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createExecutor } from "@idem/executor";
import { openJournalStore } from "@idem/journal";
import { createLogger } from "@idem/runtime";
import { journalLocationOf, parseConfig } from "@idem/schema";
import { fileOf, messageOf, OUTPUT, repoOf } from "../lib/workload.mjs";

const { values } = parseArgs({ options: { config: { type: "string" } } });
if (!values.config) throw new Error("usage: node idem-executor.mjs --config FILE");
const file = resolve(values.config);
const parsed = parseConfig(JSON.parse(readFileSync(file, "utf8")), { dir: dirname(file), file });
if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
const { config } = parsed;
const repos = Number(process.env.IDEM_BENCH_REPOS ?? 0);
const repoFor = (jobId) => (repos > 0 ? repoOf(Number(/\d+$/.exec(jobId)?.[0]), repos) : "site");
const journal = await openJournalStore(journalLocationOf(config), {
  synchronous: config.journal.synchronous,
});
const executor = createExecutor({
  config,
  journal,
  logger: createLogger({ name: "idem-executor" }),
  run: async (job) => ({
    summary: "1 KB",
    effects: [
      {
        kind: "git.commit",
        repo: repoFor(job.jobId),
        message: messageOf(job.jobId),
        files: [{ path: fileOf(job.jobId), content: OUTPUT }],
      },
    ],
  }),
});
await executor.start();
const signal = await Promise.race(
  ["SIGTERM", "SIGINT"].map((s) => new Promise((ok) => process.once(s, () => ok(s)))),
);
process.stderr.write(`idem-executor: ${signal}, draining\n`);
await executor.stop({ graceMs: config.queue.stopGraceMs });
await journal.close();
