import { type AuditReport, isAuditClean } from "@idem/core";
import { color, formatTime, table } from "../context.js";
import { terminalText } from "./terminal-text.js";

/** The audit as tables for people (`idem audit`, and the end of `idem demo`). */
export function printAudit(report: AuditReport): string {
  const clean = isAuditClean(report);
  let out = `audit ${report.since === null ? "of all time" : `since ${formatTime(report.since)}`}\n`;
  out += `${table(
    ["what", "count"],
    [
      ["jobs enqueued", report.enqueued],
      ["outputs recorded", report.outputs],
      ["redeliveries skipped", report.redeliveriesSkipped],
      ["conflicts refused", report.conflictsRefused],
      ["effects applied", report.effects.applied],
      ["effects found present", report.effects.present],
      ["duplicate effects at targets", report.duplicateEffectsAtTargets],
      ["drift", report.drift.length],
      ["unknown keys at targets", report.unknownKeys.length],
      ["dead letters", report.deadLetters],
      ["approvals decided", report.approvals.length],
    ],
  )}\n`;
  for (const a of report.approvals.slice(-20))
    out += `approval ${a.jobId}#${a.generation}: ${a.step} by ${terminalText(a.actor)} at ${new Date(a.at).toISOString()}${a.reason === null ? "" : `: ${terminalText(a.reason)}`}\n`;
  if (report.targets.length > 0) {
    out += `targets scanned: ${report.targets.map((t) => `${t.target} (${t.keys} keys)`).join(", ")}\n`;
  }
  if (report.unverifiable > 0) {
    out += `${report.unverifiable} settled effect(s) cannot be checked at their target (nats.publish, http without probeUrl)\n`;
  }
  if (report.duplicates.length > 0) {
    out += `${color.red("duplicates")}: one effect key at more than one location\n${table(
      ["key", "count", "target", "locations"],
      report.duplicates.map((d) => [d.key, d.count, d.target, shortLocations(d.commits)]),
    )}\n`;
  }
  if (report.drift.length > 0) {
    out += `${color.red("drift")}: settled in the ledger, missing at the target\n${table(
      ["key", "reason"],
      report.drift.map((d) => [d.key, d.reason]),
    )}\n`;
  }
  if (report.unknownKeys.length > 0) {
    // Keys come from what the target holds (commit messages, ticket fields): printed escaped by `table`.
    out += `${color.red("unknown keys")}: at the target, with no recorded effect in the journal (or its archive)\n${table(
      ["key", "target", "locations"],
      report.unknownKeys.slice(0, 200).map((u) => [u.key, u.target, shortLocations(u.commits)]),
    )}\n`;
    if (report.unknownKeys.length > 200)
      out += `${report.unknownKeys.length - 200} more; --json lists every one\n`;
  }
  for (const u of report.unread) out += `could not read ${u.target}: ${terminalText(u.error)}\n`;
  out += clean
    ? `${color.green("clean")}: every effect key at most once at its target, no drift, no unknown key\n`
    : `${color.red("NOT CLEAN")}: see docs/runbook.md (Duplicates and drift in the audit${report.unknownKeys.length > 0 ? '; unknown keys: "A damaged journal"' : ""})\n`;
  return out;
}

/**
 * Where a key is at its target (a kind's scan: git commits, ticket ids, stream entries), for
 * people: git object names cut to 12 characters when that keeps them apart, anything else whole.
 */
export function shortLocations(locations: readonly string[]): string {
  const hashes = locations.every((l) => /^[0-9a-f]{40,64}$/.test(l));
  const short = locations.map((l) => l.slice(0, 12));
  return (hashes && new Set(short).size === new Set(locations).size ? short : locations).join(" ");
}
