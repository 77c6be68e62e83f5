import {
  type JobsListing,
  leaseHoldersPastTime,
  listJobs,
  type PendingRestore,
  pendingRestore,
  readStreamBacklog,
  type StuckHolder,
  WAITING_JOB_STATES,
} from "@idem/core";
import type { AwaitingRun } from "@idem/journal";
import { CliError, EXIT, formatTime, loadConfig, printJson, table } from "../context.js";
import { withExistingJournal } from "../ops/existing-journal.js";
import { clip, isWide, shortOwner, textLine } from "../render/fit-table.js";
import { renderPendingRestore } from "../render/print-restore.js";
import { renderStuckHolders } from "../render/print-stuck.js";

/** `idem jobs`, imported when it runs (its options and help: commands/jobs.ts). */
export async function runJobs(opts: {
  agent?: string;
  limit?: string;
  json?: boolean;
  config?: string;
}): Promise<void> {
  const config = loadConfig(opts);
  const limit = opts.limit === undefined ? 100 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new CliError(`--limit ${opts.limit} is not a positive integer`, EXIT.USAGE);
  const listing = await withExistingJournal(config, async (journal) => {
    const read = await listJobs(journal, config, {
      limit,
      ...(opts.agent === undefined ? {} : { agent: opts.agent }),
    });
    const stream = await readStreamBacklog(config, { agents: read.jobs.map((j) => j.agent) });
    const stuck = (await leaseHoldersPastTime(journal)).filter((h) => h.key === "jobs");
    const restore = (await pendingRestore(config, journal)) ?? null;
    // Outputs recorded whose run waits for a person (docs/approvals.md): listed with the jobs.
    const awaitingApproval = await journal.approvals.awaiting(limit);
    return { ...read, stream: stream ?? null, stuck, restore, awaitingApproval };
  });
  if (opts.json) {
    printJson(listing);
    return;
  }
  process.stdout.write(render(listing) + awaitingText(listing.awaitingApproval));
}

/** The jobs whose recorded output awaits a person's approval. */
function awaitingText(awaiting: readonly AwaitingRun[]): string {
  if (awaiting.length === 0) return "";
  return `awaiting approval (idem approve JOB --reason R, idem reject JOB --reason R)\n${table(
    ["job", "agent", "gen", "effects", "rules", "expires"],
    awaiting.map((a) => [
      a.jobId,
      a.agent,
      a.generation,
      a.request.effects.join(","),
      a.request.rules.join(", "),
      formatTime(a.request.expiresAt),
    ]),
  )}\n`;
}

/** The listing as tables for people. */
function render(l: JobsListing & { stuck: StuckHolder[]; restore: PendingRestore | null }): string {
  let out = l.restore ? renderPendingRestore(l.restore) : "";
  if (l.jobs.length === 0) {
    out += `no job waits for an output (${l.transport === "jetstream" ? "the journal's outbox and claims" : "embedded queue"})\n`;
  } else {
    // Compact: the lease end or the next try in one column (a job has at most one), the holder
    // as host:pid:random, the error wrapped; --wide: each in full, in its own column.
    const head = isWide()
      ? ["job", "agent", "state", "delivery", "holder", "lease ends", "next try", "last error"]
      : ["job", "agent", "state", "delivery", "holder", "until", "last error"];
    out += `${table(
      head,
      l.jobs.map((j) => [
        j.jobId,
        j.agent,
        j.state,
        `${j.deliveries}/${j.maxDeliver}`,
        shortOwner(j.holder),
        ...(isWide()
          ? [formatTime(j.leaseUntil), formatTime(j.nextAt)]
          : [formatTime(j.leaseUntil ?? j.nextAt)]),
        j.lastError === null ? "" : clip(j.lastError, 240),
      ]),
    )}\n`;
    const counts = WAITING_JOB_STATES.map((s) => `${l.counts[s]} ${s}`).join(", ");
    out += `${l.jobs.length} job(s)${l.truncated ? " shown (more wait: --limit)" : ""}: ${counts}; read at ${formatTime(l.at)}\n`;
    for (const j of l.jobs) {
      if (j.state === "leased" || j.state === "expired")
        out += `${textLine(`  ${j.jobId}: ${j.holder ? j.next.replace(j.holder, shortOwner(j.holder)) : j.next}`, "    ")}\n`;
    }
    if (l.counts.leased + l.counts.expired > 0) {
      out += `${textLine("  a job whose executor died stays leased until its lease ends (docs/agents.md, When an executor dies)", "    ")}\n`;
    }
  }
  if (l.stream) {
    if (l.stream.error) out += `stream ${l.stream.stream}: ${l.stream.error}\n`;
    if (l.stream.consumers.length > 0) {
      out += `stream ${l.stream.stream}, as the server counts it\n${table(
        ["agent", "consumer", "not delivered", "delivered, unacked", "redelivered"],
        l.stream.consumers.map((c) => [
          c.agent,
          c.consumer,
          c.pending,
          c.ackPending,
          c.redelivered,
        ]),
      )}\n`;
    }
  }
  return out + renderStuckHolders(l.stuck);
}
