import type { DeadLetterRecord, EffectRecord, JournalStore, RunRecord } from "@idem/journal";
import type { Command } from "commander";
import {
  actorOf,
  CliError,
  EXIT,
  formatTime,
  loadConfig,
  printJson,
  table,
  withJournal,
} from "../context.js";
import { listDeadLetteredJobs, retryDeadLetteredJob } from "./dlq-jobs.js";

// `idem dlq` is owned here. Dead runs and uncertain effects (the interpreter's side) are handled in
// this file; dead-lettered jobs (jobs that never produced an output, the executor's side) go
// through dlq-jobs.ts.

interface DeadRun {
  jobId: string;
  generation: number;
  class: string | null;
  attempts: number;
  leaseExpiries: number;
  lastError: string | null;
  updatedAt: number;
  /** The effects of the dead generation that are not settled: uncertain, failed or intended. */
  effects: { key: string; kind: string; state: string; detail: Record<string, unknown> | null }[];
}

export interface DlqListing {
  runs: DeadRun[];
  uncertain: { key: string; jobId: string; generation: number; kind: string; detail: unknown }[];
  jobs: DeadLetterRecord[];
}

const OPEN_STATES = new Set(["uncertain", "failed", "intended"]);

/** Dead runs (latest generation per output), their unsettled effects, and open dead letters. */
export async function listDlq(journal: JournalStore): Promise<DlqListing> {
  const runs: DeadRun[] = [];
  for (const o of await journal.list({ state: "dead" })) {
    const run = (await journal.latestRun(o.jobId)) as RunRecord;
    const effects = (await journal.effects(o.jobId, run.generation)).filter((e) =>
      OPEN_STATES.has(e.state),
    );
    runs.push({
      jobId: run.jobId,
      generation: run.generation,
      class: run.class,
      attempts: run.attempts,
      leaseExpiries: run.leaseExpiries,
      lastError: run.lastError,
      updatedAt: run.updatedAt,
      effects: effects.map((e: EffectRecord) => ({
        key: e.key,
        kind: e.kind,
        state: e.state,
        detail: e.detail,
      })),
    });
  }
  const uncertain = runs.flatMap((r) =>
    r.effects
      .filter((e) => e.state === "uncertain")
      .map((e) => ({
        key: e.key,
        jobId: r.jobId,
        generation: r.generation,
        kind: e.kind,
        detail: e.detail,
      })),
  );
  return { runs, uncertain, jobs: await listDeadLetteredJobs(journal) };
}

/** --config wherever it was given: on the subcommand, on `dlq`, or before it on `idem`. */
function configOption(dlq: Command, opts: { config?: string }): string | undefined {
  return opts.config ?? (dlq.opts().config as string | undefined) ?? dlq.parent?.opts().config;
}

const short = (s: string | null | undefined, n = 80) =>
  s === null || s === undefined ? "" : s.length > n ? `${s.slice(0, n - 1)}…` : s;

export function register(program: Command): void {
  const dlq = program
    .command("dlq")
    .description(
      "dead runs, uncertain effects and dead-lettered jobs, and the human decision on them",
    );

  dlq
    .command("ls")
    .description(
      "dead runs (class, attempts, last error), uncertain effects and dead-lettered jobs",
    )
    .option("--json", "print JSON")
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(async (opts: { json?: boolean; config?: string }) => {
      const config = loadConfig({ config: configOption(dlq, opts) });
      const listing = await withJournal(config, listDlq);
      if (opts.json) {
        printJson(listing);
        return;
      }
      process.stdout.write(
        `dead runs\n${table(
          ["job", "gen", "class", "attempts", "lease expiries", "open effects", "last error", "at"],
          listing.runs.map((r) => [
            r.jobId,
            r.generation,
            r.class,
            r.attempts,
            r.leaseExpiries,
            r.effects.map((e) => `${e.key} ${e.state}`).join(", "),
            short(r.lastError),
            formatTime(r.updatedAt),
          ]),
        )}\n`,
      );
      if (listing.uncertain.length > 0) {
        process.stdout.write(
          `uncertain effects (idem dlq resolve JOB --applied|--skipped --reason R)\n${table(
            ["key", "kind", "detail"],
            listing.uncertain.map((u) => [u.key, u.kind, short(JSON.stringify(u.detail))]),
          )}\n`,
        );
      }
      process.stdout.write(
        `dead-lettered jobs\n${table(
          ["job", "agent", "class", "deliveries", "last error", "at"],
          listing.jobs.map((j) => [
            j.jobId,
            j.agent,
            j.class,
            j.deliveries,
            short(j.lastError),
            formatTime(j.at),
          ]),
        )}\n`,
      );
    });

  dlq
    .command("retry")
    .description(
      "a dead run: a new generation (probes everything again); a dead-lettered job: re-enqueue it",
    )
    .argument("<job>", "job ID")
    .option("--actor <name>", "who decides (default: $USER)")
    .option("--json", "print JSON")
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(async (jobId: string, opts: { actor?: string; json?: boolean; config?: string }) => {
      const config = loadConfig({ config: configOption(dlq, opts) });
      const actor = actorOf(opts.actor);
      const created = await withJournal(config, async (j) => {
        const run = await j.latestRun(jobId);
        if (!run) {
          if ((await j.deadLetters.list({ unresolved: true })).some((d) => d.jobId === jobId)) {
            return { job: await retryDeadLetteredJob(jobId, config, j, actor) };
          }
          throw new CliError(`no output and no dead letter for job ${jobId}`, EXIT.FAILED);
        }
        if (run.state !== "dead") {
          throw new CliError(
            `the latest run of ${jobId} is ${run.state}, not dead: nothing to retry (idem replay makes a new generation of any output)`,
            EXIT.FAILED,
          );
        }
        const runs = await j.replay({ jobIds: [jobId] }, { actor });
        const next = runs[0];
        if (!next) throw new CliError(`job ${jobId} could not be retried`, EXIT.FAILED);
        return { run: next };
      });
      const { job, run } = created;
      if (job !== undefined) {
        if (opts.json) printJson({ ...job, requeued: true });
        else
          process.stdout.write(
            `${jobId}: dead-lettered job queued again (retry ${job.retry}, ${job.stream} seq ${job.seq})\n`,
          );
        return;
      }
      if (run === undefined) return;
      if (opts.json) printJson({ jobId, generation: run.generation, state: run.state });
      else
        process.stdout.write(
          `${jobId}: generation ${run.generation} created (pending); the interpreter probes every effect again\n`,
        );
    });

  dlq
    .command("resolve")
    .description(
      "settles the uncertain effect of a dead run as applied or skipped; the run goes on with the rest",
    )
    .argument("<job>", "job ID")
    .option("--applied", "the effect did happen")
    .option("--skipped", "the effect did not happen and must not be sent")
    .option("--reason <text>", "why (required; recorded with the actor)")
    .option("--actor <name>", "who decides (default: $USER)")
    .option("--json", "print JSON")
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(
      async (
        jobId: string,
        opts: {
          applied?: boolean;
          skipped?: boolean;
          reason?: string;
          actor?: string;
          json?: boolean;
          config?: string;
        },
      ) => {
        if (Boolean(opts.applied) === Boolean(opts.skipped)) {
          throw new CliError("give exactly one of --applied or --skipped", EXIT.USAGE);
        }
        if (opts.reason === undefined || opts.reason.trim() === "") {
          throw new CliError("--reason is required: say why, it is recorded", EXIT.USAGE);
        }
        const config = loadConfig({ config: configOption(dlq, opts) });
        const decision = opts.applied ? "applied" : "skipped";
        const actor = actorOf(opts.actor);
        const reason = opts.reason;
        const { effect, run } = await withJournal(config, async (j) => {
          const effect = await j.resolve(jobId, decision, reason, actor);
          return { effect, run: await j.latestRun(jobId) };
        });
        if (opts.json) {
          printJson({
            jobId,
            key: effect.key,
            generation: effect.generation,
            decision,
            reason,
            actor,
            run: run?.state,
          });
        } else {
          process.stdout.write(
            `${effect.key}: ${decision} (by ${actor}: ${reason}); run ${jobId}#${effect.generation} is ${run?.state}\n`,
          );
        }
      },
    );
}
