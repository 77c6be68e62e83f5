import { createEffects } from "@idem/effects";
import type { Command } from "commander";
import { color, EXIT, exitHolder, formatTime, loadConfig, printJson, table } from "../context.js";
import { buildAudit } from "../ops/audit-report.js";
import { withReadonlyJournal } from "../ops/readonly-journal.js";
import { sinceOption } from "./ls.js";

export function register(program: Command): void {
  program
    .command("audit")
    .description(
      "reconciliation of the journal against the targets; exit 3 on a duplicate or drift",
    )
    .option("--since <time>", "from an ISO-8601 time or a duration back (15m, 2h, 7d)")
    .option("--json", "print JSON")
    .action(async (opts: { since?: string; json?: boolean; config?: string }, cmd: Command) => {
      const config = loadConfig(cmd.optsWithGlobals());
      const since = sinceOption(opts.since);
      const effects = createEffects(config);
      const report = await withReadonlyJournal(config, (j) =>
        buildAudit(config, j, effects, since),
      ).finally(() => effects.close());
      const clean = report.duplicates.length === 0 && report.drift.length === 0;
      if (!clean) exitHolder.code = EXIT.INVARIANT;
      if (opts.json) {
        printJson(report);
        return;
      }
      process.stdout.write(printAudit(report));
    });
}

/** The audit as tables for people (also the end of `idem demo`). */
export function printAudit(report: Awaited<ReturnType<typeof buildAudit>>): string {
  const clean = report.duplicates.length === 0 && report.drift.length === 0;
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
      ["dead letters", report.deadLetters],
    ],
  )}\n`;
  if (report.targets.length > 0) {
    out += `targets scanned: ${report.targets.map((t) => `${t.target} (${t.keys} keys)`).join(", ")}\n`;
  }
  if (report.unverifiable > 0) {
    out += `${report.unverifiable} settled effect(s) cannot be checked at their target (nats.publish, http without probeUrl)\n`;
  }
  if (report.duplicates.length > 0) {
    out += `${color.red("duplicates")}: one effect key on more than one commit\n${table(
      ["key", "count", "target", "commits"],
      report.duplicates.map((d) => [
        d.key,
        d.count,
        d.target,
        d.commits.map((c) => c.slice(0, 12)).join(" "),
      ]),
    )}\n`;
  }
  if (report.drift.length > 0) {
    out += `${color.red("drift")}: settled in the ledger, missing at the target\n${table(
      ["key", "reason"],
      report.drift.map((d) => [d.key, d.reason]),
    )}\n`;
  }
  out += clean
    ? `${color.green("clean")}: every effect key at most once at its target, no drift\n`
    : `${color.red("NOT CLEAN")}: see docs/runbook.md (Duplicates and drift in the audit)\n`;
  return out;
}
