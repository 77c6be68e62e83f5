import { LEASED_SHOWN, readLeasedJobs, readStatus, readStuckHolders } from "@idem/core";
import type { AwaitingRun } from "@idem/journal";
import { EFFECT_STATES, RUN_STATES } from "@idem/schema";
import { formatTime, loadConfig, printJson, table } from "../context.js";
import { withExistingJournal } from "../ops/existing-journal.js";
import { shortOwner } from "../render/fit-table.js";
import { renderStuckHolders } from "../render/print-stuck.js";

/** How many runs awaiting approval `idem status` lists (the count covers all). */
const AWAITING_SHOWN = 20;

/** The runs awaiting a person's approval, longest waiting first (docs/approvals.md). */
function awaitingText(awaiting: readonly AwaitingRun[], total: number): string {
  const more = total > awaiting.length ? ` (the first ${awaiting.length} of ${total})` : "";
  return `awaiting approval${more}: idem approve JOB --reason R, or idem reject JOB --reason R\n${table(
    ["job", "gen", "agent", "effects", "rules", "waiting since", "expires"],
    awaiting.map((a) => [
      a.jobId,
      a.generation,
      a.agent,
      a.request.effects.join(","),
      a.request.rules.join(", "),
      formatTime(a.since),
      formatTime(a.request.expiresAt),
    ]),
  )}\n`;
}

/**
 * `idem status`, imported when it runs (its options and help: commands/status.ts). It reads the
 * journal read-only and never creates it: a missing journal (or PostgreSQL tables) is exit 3
 * naming `idem init --journal`.
 */
export async function runStatus(opts: { json?: boolean; config?: string }): Promise<void> {
  const config = loadConfig(opts);
  const { s, leased, stuck, awaiting } = await withExistingJournal(config, async (journal) => ({
    s: await readStatus(journal),
    leased: await readLeasedJobs(journal),
    stuck: await readStuckHolders(config, journal),
    awaiting: await journal.approvals.awaiting(AWAITING_SHOWN),
  }));
  if (opts.json) {
    printJson({ ...s, leased, stuck, awaiting });
    return;
  }
  // The jobs in `idem jobs`' words: queued (due now) and waiting (for a retry) apart.
  process.stdout.write(
    `${table(
      [
        "outputs",
        "rejections",
        "dead letters",
        "jobs queued",
        "jobs waiting",
        "jobs running",
        "jobs done",
        "jobs dead",
      ],
      [
        [
          s.outputs,
          s.rejections,
          s.deadLetters,
          s.jobs.queued - s.jobsWaiting,
          s.jobsWaiting,
          s.jobs.running,
          s.jobs.done,
          s.jobs.dead,
        ],
      ],
    )}\n`,
  );
  if (s.rejectedBodies.dropped > 0)
    process.stdout.write(
      `${s.rejectedBodies.dropped} conflicting bodies not kept: over ${s.rejectedBodies.perJob} per job, only their hash, source and time are (idem show JOB lists a job's rejections)\n`,
    );
  if (leased.length > 0) {
    const more = s.jobs.running > leased.length ? ` (the first ${LEASED_SHOWN})` : "";
    process.stdout.write(
      `jobs under a delivery's lease${more}; idem jobs lists every waiting job\n${table(
        ["job", "agent", "holder", "lease ends", "delivery"],
        leased.map((l) => [
          l.jobId,
          l.agent,
          shortOwner(l.holder),
          `${formatTime(l.leaseUntil)}${l.ended ? " (ended: holder died or stalled; next claim takes it)" : ""}`,
          l.deliveries,
        ]),
      )}\n`,
    );
  }
  process.stdout.write(
    `runs (latest per output)\n${table([...RUN_STATES], [RUN_STATES.map((k) => s.runs[k])])}\n`,
  );
  if (awaiting.length > 0) process.stdout.write(awaitingText(awaiting, s.runs.awaiting));
  process.stdout.write(
    `effects\n${table([...EFFECT_STATES], [EFFECT_STATES.map((k) => s.effects[k])])}\n`,
  );
  process.stdout.write(renderStuckHolders(stuck));
}
