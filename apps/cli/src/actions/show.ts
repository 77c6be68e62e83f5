import {
  type DamagedJobView,
  damagedOutputProblem,
  describeFilter,
  type JobView,
  type PendingJobView,
  type ShownApproval,
  showArchivedJob,
  showDamagedJob,
  showJob,
  showPendingJob,
} from "@idem/core";
import type { EventRecord, ReplaySelection, RunRecord } from "@idem/journal";
import { isIdemError } from "@idem/schema";
import { formatTime, loadConfigWithKinds, printJson, table } from "../context.js";
import { withExistingJournal } from "../ops/existing-journal.js";
import { clip, shortOwner, textLine } from "../render/fit-table.js";
import { terminalText } from "../render/terminal-text.js";

/**
 * `idem show`, imported when it runs (its options and help: commands/show.ts). A job with no
 * output yet is shown from its queue row (where it stands, who holds it, until when).
 */
export async function runShow(
  jobId: string,
  opts: { archive?: boolean; json?: boolean; config?: string },
): Promise<void> {
  const config = await loadConfigWithKinds(opts);
  const data: JobView | PendingJobView | DamagedJobView = opts.archive
    ? showArchivedJob(config.journal.archiveDir, jobId)
    : await withExistingJournal(config, async (j) => {
        try {
          return await showJob(j, jobId);
        } catch (e) {
          const problem = damagedOutputProblem(e);
          if (problem !== undefined) return await showDamagedJob(j, jobId, problem);
          if (!isIdemError(e, "NOT_FOUND")) throw e;
          return await showPendingJob(j, config, jobId);
        }
      });
  if (opts.json) {
    printJson(data);
    return;
  }
  if (data.output === null && "damaged" in data) {
    process.stdout.write(
      `job ${data.damaged.jobId}  DAMAGED output: ${terminalText(data.damaged.problem)}\n` +
        `its run ends dead (class integrity) and nothing of it is applied; see docs/runbook.md, "A damaged output"\n`,
    );
    process.stdout.write(runsText(data.runs));
    process.stdout.write(eventsText(data.events));
    return;
  }
  if (data.output === null) {
    process.stdout.write(pendingText(data));
    return;
  }
  const o = data.output;
  // The summary is the agent's text: printed with its control characters escaped.
  const summary = o.output.summary ? `summary: ${terminalText(o.output.summary)}\n` : "";
  process.stdout.write(
    `${textLine(`job ${o.jobId}  agent ${o.agent}  source ${terminalText(o.source)}  recorded ${formatTime(o.recordedAt)}${data.archived ? "  (archived)" : ""}`)}\n` +
      `content ${o.contentHash}\n${summary}`,
  );
  process.stdout.write(runsText(data.runs));
  if (data.lineage.length > 0) {
    process.stdout.write(
      `lineage\n${table(
        ["gen", "replays", "at", "actor", "reason", "selection", "effects"],
        data.lineage.map((l) => [
          l.generation,
          l.replaysGeneration,
          formatTime(l.at),
          l.actor,
          l.reason ?? "(none given)",
          describeSelection(l.selection),
          describeFilter(l.only),
        ]),
      )}\n`,
    );
  }
  if (data.approvals.length > 0) process.stdout.write(approvalsText(data.approvals));
  process.stdout.write(
    `effects\n${table(
      ["key", "gen", "kind", "state", "detail"],
      data.effects.map((e) => [
        e.key,
        e.generation,
        e.kind,
        e.state,
        e.detail ? clip(JSON.stringify(e.detail), 240) : "",
      ]),
    )}\n`,
  );
  process.stdout.write(eventsText(data.events));
}

/** Who approved or rejected what, when and why (docs/approvals.md). */
function approvalsText(steps: readonly ShownApproval[]): string {
  return `approvals\n${table(
    ["gen", "at", "step", "by", "effects", "reason", "rules", "until"],
    steps.map((a) => [
      a.generation,
      formatTime(a.at),
      a.step,
      terminalText(a.actor),
      a.effects.join(","),
      a.reason === null ? "" : terminalText(a.reason),
      a.rules.join(", "),
      formatTime(a.expiresAt),
    ]),
  )}\n`;
}

function runsText(runs: readonly RunRecord[]): string {
  return `runs\n${table(
    ["gen", "state", "attempts", "lease expiries", "class", "effects", "last error"],
    runs.map((r) => [
      r.generation,
      r.state,
      r.attempts,
      r.leaseExpiries,
      r.class,
      r.only ? `only ${describeFilter(r.only)}` : "all",
      r.lastError,
    ]),
  )}\n`;
}

function eventsText(events: readonly EventRecord[]): string {
  return `events\n${table(
    ["at", "type", "actor", "data"],
    events.map((e) => [
      formatTime(e.at),
      e.type,
      shortOwner(e.actor),
      e.data ? clip(JSON.stringify(e.data), 240) : "",
    ]),
  )}\n`;
}

/** A job with no output: where it stands in the queue, and what happens next. */
function pendingText(v: PendingJobView): string {
  const j = v.job;
  let out = `${textLine(`job ${j.jobId}  agent ${j.agent}  no output recorded yet: ${j.state}`)}\n`;
  let where =
    j.deliveries === 0 ? "not delivered yet" : `delivery ${j.deliveries} of ${j.maxDeliver}`;
  if (j.holder !== null && (j.state === "leased" || j.state === "expired"))
    where += `, held by ${shortOwner(j.holder)} until ${formatTime(j.leaseUntil)}`;
  if (j.nextAt !== null) where += `, next try ${formatTime(j.nextAt)}`;
  const next = j.holder ? j.next.replace(j.holder, shortOwner(j.holder)) : j.next;
  out += `${textLine(where)}\n${textLine(`next: ${next}`)}\n`;
  out += `${textLine(`input (${v.input.bytes} bytes): ${terminalText(v.input.summary)}`)}\n`;
  if (j.lastError !== null)
    out += `${textLine(`last error (${j.lastClass ?? "?"}): ${terminalText(j.lastError)}`)}\n`;
  if (v.deadLetter)
    out += `${textLine(`dead letter: ${v.deadLetter.class} after ${v.deadLetter.deliveries} deliveries at ${formatTime(v.deadLetter.at)}: ${terminalText(v.deadLetter.lastError)}`)}\n`;
  return out + eventsText(v.events);
}

/** A replay's selection as its options: `--agent writer --since 2026-...`. */
function describeSelection(s: ReplaySelection): string {
  const parts: string[] = [];
  if (s.jobIds) {
    const shown = s.jobIds.slice(0, 5).join(" ");
    parts.push(`--job ${shown}${s.jobIds.length > 5 ? ` (+${s.jobIds.length - 5})` : ""}`);
  }
  if (s.agent !== undefined) parts.push(`--agent ${s.agent}`);
  if (s.since !== undefined) parts.push(`--since ${formatTime(s.since)}`);
  if (s.state !== undefined) parts.push(`--state ${s.state}`);
  if (s.all) parts.push("--all");
  return parts.join(" ");
}
