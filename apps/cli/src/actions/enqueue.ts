import {
  type BatchEnqueueResult,
  type EnqueueFailure,
  type EnqueueOutcome,
  enqueueJob,
  enqueueJobs,
  type JobFile,
  type JobFileProblems,
  parseJobFile,
} from "@idem/core/enqueue";
import type { JournalStore } from "@idem/journal";
import { type JobPublisher, withJobPublisher } from "@idem/nats";
import { createLogger, startTelemetry, type Tracing } from "@idem/runtime";
import { isIdemError, type Job } from "@idem/schema";
import type { Command } from "commander";
import {
  CliError,
  capped,
  color,
  EXIT,
  exitHolder,
  loadConfig,
  printJson,
  readText,
  withJournal,
} from "../context.js";
import { progressBar } from "../render/progress-bar.js";
import { terminalText } from "../render/terminal-text.js";

/** `idem enqueue`, imported when it runs (its options and help: commands/enqueue.ts). */
export async function runEnqueue(file: string, opts: EnqueueOptions, cmd: Command): Promise<void> {
  const config = loadConfig(cmd.optsWithGlobals());
  const concurrency = Number(opts.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1024) {
    throw new CliError(
      `--concurrency must be an integer from 1 to 1024, got ${opts.concurrency}`,
      EXIT.USAGE,
    );
  }
  // The embedded queue's executor runs this config's agents: a job for any other would sit
  // queued forever. On JetStream executors elsewhere may run others, unless --check-agents.
  const agents = !config.nats || opts.checkAgents ? Object.keys(config.agents) : undefined;
  const { jobs, batch } = readJobFile(file, agents);
  // Off unless telemetry.otlpUrl or OTEL_EXPORTER_OTLP_ENDPOINT is set: each job's trace starts
  // here (its enqueue span) and travels with it; TRACEPARENT continues a caller's trace.
  const logger = createLogger({
    name: "idem-enqueue",
    level: process.env.IDEM_LOG_LEVEL ?? "warn",
  });
  // A one-shot command waits 2 s at most for an unreachable receiver on its way out.
  const tracing = startTelemetry({
    config,
    service: "idem-enqueue",
    logger,
    shutdownTimeoutMs: 2_000,
  });
  const traceparent = process.env.TRACEPARENT;
  try {
    await withJournal(config, (journal) =>
      withJobPublisher(config, "idem enqueue", async (publisher) => {
        const options = { journal, publisher, tracing, traceparent };
        if (!batch) {
          report(await enqueueJob(jobs[0] as Job, options), opts.json);
          return;
        }
        const result = await enqueueBatch(jobs, { ...options, concurrency });
        reportBatch(jobs, result, opts.json);
      }),
    );
  } finally {
    await tracing.shutdown();
  }
}

interface EnqueueOptions {
  json?: boolean;
  concurrency: string;
  checkAgents?: boolean;
}

/** The jobs of FILE; a refused file exits 1 with its problems listed under the message. */
function readJobFile(file: string, agents: string[] | undefined): JobFile {
  const text = readText(file, "job");
  try {
    return parseJobFile(text, file, agents === undefined ? {} : { agents });
  } catch (e) {
    if (!isIdemError(e, "INVALID_INPUT")) throw e;
    const { problems } = e.details as unknown as JobFileProblems;
    if (problems.length === 0) throw new CliError(e.message, EXIT.FAILED);
    throw new CliError(`${e.message}\n${capped(problems).join("\n")}`, EXIT.FAILED, problems);
  }
}

function report(outcome: EnqueueOutcome, json?: boolean): void {
  if (json) {
    printJson(outcome);
    return;
  }
  process.stdout.write(
    outcome.duplicate
      ? `${color.yellow("duplicate")} ${outcome.jobId}: already enqueued (${outcome.stream} seq ${outcome.seq}), nothing new\n`
      : `${color.green("enqueued")} ${outcome.jobId} (${outcome.stream} seq ${outcome.seq})\n`,
  );
}

/** A batch, with a progress bar on stderr when it is a terminal. */
async function enqueueBatch(
  jobs: Job[],
  options: {
    journal: JournalStore;
    publisher: JobPublisher | undefined;
    concurrency: number;
    tracing: Tracing;
    traceparent: string | undefined;
  },
): Promise<BatchEnqueueResult> {
  const bar = process.stderr.isTTY
    ? await progressBar("enqueueing [{bar}] {value}/{total} jobs | {eta_formatted} left")
    : undefined;
  bar?.start(jobs.length, 0);
  let settled = 0;
  try {
    return await enqueueJobs(jobs, { ...options, onSettled: () => bar?.update(++settled) });
  } finally {
    bar?.stop();
  }
}

/** A job of the batch not enqueued: refused, unpublished, or not attempted. */
interface Unenqueued {
  jobId: string;
  error: { code: EnqueueFailure["error"]["code"] | "NOT_ATTEMPTED"; message: string };
}
const isFailure = (r: EnqueueOutcome | Unenqueued): r is Unenqueued => "error" in r;

/**
 * `--json`: one entry per job in file order, the enqueue shape of docs/cli.md or `{ jobId, error }`
 * (`NOT_ATTEMPTED` after the stream became unavailable). People get counts and the failures. Exit 1
 * when any job is not enqueued.
 */
function reportBatch(jobs: Job[], result: BatchEnqueueResult, json?: boolean): void {
  const entries = result.outcomes.map(
    (o, i): EnqueueOutcome | Unenqueued =>
      o ?? {
        jobId: (jobs[i] as Job).jobId,
        error: { code: "NOT_ATTEMPTED", message: "not attempted: the stream was unavailable" },
      },
  );
  const failures = entries.filter(isFailure);
  exitHolder.code = failures.length > 0 ? EXIT.FAILED : EXIT.OK;
  if (result.stoppedBy) {
    process.stderr.write(
      `idem: stopped: ${terminalText(result.stoppedBy.message)}${result.stoppedBy.cause instanceof Error ? ` (${terminalText(result.stoppedBy.cause.message)})` : ""}; run the same file again once the stream is back (what is enqueued comes back as a duplicate)\n`,
    );
  }
  if (json) {
    printJson(entries);
    return;
  }
  const done = entries.filter((e): e is EnqueueOutcome => !isFailure(e));
  const duplicates = done.filter((o) => o.duplicate).length;
  const count = (code: string) => failures.filter((f) => f.error.code === code).length;
  const parts = [
    `${color.green("enqueued")} ${done.length - duplicates}`,
    `${color.yellow("duplicate")} ${duplicates}`,
  ];
  if (count("JOB_CONFLICT") > 0)
    parts.push(`${color.red("refused")} ${count("JOB_CONFLICT")} (conflict)`);
  if (count("UNAVAILABLE") > 0)
    parts.push(
      `${color.red("unpublished")} ${count("UNAVAILABLE")} (in the outbox: the executor republishes them)`,
    );
  if (count("NOT_ATTEMPTED") > 0)
    parts.push(`${color.red("not attempted")} ${count("NOT_ATTEMPTED")}`);
  process.stdout.write(`${entries.length} jobs: ${parts.join(", ")}\n`);
  // The jobs not attempted are the rest of the file after the stop: counted, not listed.
  const listed = failures.filter((f) => f.error.code !== "NOT_ATTEMPTED");
  for (const line of capped(listed.map((f) => `${f.jobId}: ${f.error.message}`)))
    process.stdout.write(`${line}\n`);
}
