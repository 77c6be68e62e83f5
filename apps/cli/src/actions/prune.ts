import { pruneCutoff, pruneJournal } from "@idem/core";
import type { Command } from "commander";
import { actorOf, formatTime, loadConfig, printJson, table, withJournal } from "../context.js";

/** `idem prune`, imported when it runs (its options and help: commands/prune.ts). */
export async function runPrune(
  opts: { dryRun?: boolean; actor?: string; json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const config = loadConfig(cmd.optsWithGlobals());
  const now = Date.now();
  // Refused (exit 3) or skipped before the journal is opened, so nothing is created.
  if (pruneCutoff(config, now) === undefined) {
    if (opts.json) printJson({ pruned: false, reason: "journal.retentionDays is not set" });
    else
      process.stdout.write(
        "journal.retentionDays is not set: idem keeps everything, nothing to prune\n",
      );
    return;
  }
  const dryRun = opts.dryRun ?? false;
  const report = await withJournal(config, (j) =>
    pruneJournal(j, { config, now, dryRun, actor: actorOf(opts.actor) }),
  );
  if (report === undefined) return;
  if (opts.json) {
    printJson({ pruned: !opts.dryRun, dryRun, ...report });
    return;
  }
  process.stdout.write(
    `${opts.dryRun ? "would archive and remove" : "archived and removed"} what was recorded before ${formatTime(report.before)} (retention ${config.journal.retentionDays}d)\n` +
      `${table(
        ["outputs", "runs", "effects", "events", "rejections", "jobs"],
        [
          [
            report.outputs,
            report.runs,
            report.effects,
            report.events,
            report.rejections,
            report.jobs,
          ],
        ],
      )}\n` +
      (report.archive ? `archive ${report.archive} (read it with idem show JOB --archive)\n` : ""),
  );
}
