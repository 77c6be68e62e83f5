import { listDeadLetters, openEffects, resolveUncertain, retryDead } from "@idem/core";
import type { Command } from "commander";
import {
  actorOf,
  CliError,
  EXIT,
  formatTime,
  loadConfigWithKinds,
  printJson,
  table,
  withJournal,
} from "../context.js";
import { withExistingJournal } from "../ops/existing-journal.js";
import { nestedConfigOption as configOption } from "../options.js";
import { clip } from "../render/fit-table.js";

/** An error or a detail, shortened to about 240 characters (whole with --wide). */
const short = (s: string | null | undefined) => (s === null || s === undefined ? "" : clip(s, 240));

/** `idem dlq ls`, imported when it runs (its options and help: commands/dlq.ts). */
export async function runDlqLs(
  opts: { json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const config = await loadConfigWithKinds({ config: configOption(cmd, opts) });
  // Read-only: it never waits on (or fails for) a write lock another process holds.
  const listing = await withExistingJournal(config, listDeadLetters);
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
}

/** `idem dlq retry`, imported when it runs (its options and help: commands/dlq.ts). */
export async function runDlqRetry(
  jobId: string,
  opts: { actor?: string; json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const config = await loadConfigWithKinds({ config: configOption(cmd, opts) });
  const actor = actorOf(opts.actor);
  const created = await withJournal(config, (journal) =>
    retryDead(jobId, { config, journal, actor }),
  );
  const { job, run } = created;
  if (job !== undefined) {
    if (opts.json) printJson({ ...job, requeued: true });
    else
      process.stdout.write(
        job.stream === "embedded"
          ? `${jobId}: dead-lettered job queued again on the embedded queue (retry ${job.retry}): an executor running its agent takes it at its next poll\n`
          : `${jobId}: dead-lettered job published again to stream ${job.stream} (seq ${job.seq}, message ID ${jobId}#retry-${job.retry})\n`,
      );
    return;
  }
  if (run === undefined) return;
  if (opts.json) printJson({ jobId, generation: run.generation, state: run.state });
  else
    process.stdout.write(
      `${jobId}: generation ${run.generation} created (pending); the interpreter probes every effect again\n`,
    );
}

/** `idem dlq resolve`, imported when it runs (its options and help: commands/dlq.ts). */
export async function runDlqResolve(
  jobId: string,
  opts: {
    applied?: boolean;
    skipped?: boolean;
    reason?: string;
    actor?: string;
    json?: boolean;
    config?: string;
  },
  cmd: Command,
): Promise<void> {
  if (Boolean(opts.applied) === Boolean(opts.skipped)) {
    throw new CliError("give exactly one of --applied or --skipped", EXIT.USAGE);
  }
  if (opts.reason === undefined || opts.reason.trim() === "") {
    throw new CliError("--reason is required: say why, it is recorded", EXIT.USAGE);
  }
  const config = await loadConfigWithKinds({ config: configOption(cmd, opts) });
  const decision = opts.applied ? "applied" : "skipped";
  const actor = actorOf(opts.actor);
  const reason = opts.reason;
  // --applied is checked at the target where it can answer: the probe decides (`present`).
  const effects = openEffects(config);
  const { effect, run } = await withJournal(config, (j) =>
    resolveUncertain(j, jobId, { decision, reason, actor }, effects),
  ).finally(() => effects.close());
  if (opts.json) {
    printJson({
      jobId,
      key: effect.key,
      generation: effect.generation,
      decision,
      state: effect.state,
      reason,
      actor,
      run,
    });
  } else {
    process.stdout.write(
      `${effect.key}: ${effect.state} (by ${actor}: ${reason}); run ${jobId}#${effect.generation} is ${run}\n`,
    );
  }
}
