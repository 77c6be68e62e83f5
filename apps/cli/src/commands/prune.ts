import { checkConfigInvariants } from "@idem/schema";
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
import { ArchiveWriter } from "../ops/archive-writer.js";

const DAY_MS = 86_400_000;

export function register(program: Command): void {
  program
    .command("prune")
    .description(
      "archives to journal.archiveDir (JSONL) and removes outputs older than journal.retentionDays",
    )
    .option("--dry-run", "only count what would be archived and removed")
    .option("--actor <name>", "who prunes (default $IDEM_ACTOR or $USER)")
    .option("--json", "print JSON")
    .action(
      async (
        opts: { dryRun?: boolean; actor?: string; json?: boolean; config?: string },
        cmd: Command,
      ) => {
        const config = loadConfig(cmd.optsWithGlobals());
        const days = config.journal.retentionDays;
        if (days === null) {
          if (opts.json) printJson({ pruned: false, reason: "journal.retentionDays is not set" });
          else
            process.stdout.write(
              "journal.retentionDays is not set: idem keeps everything, nothing to prune\n",
            );
          return;
        }
        const violations = checkConfigInvariants(config);
        if (violations.length > 0) {
          // Pruning under a broken invariant 7 could forget a job its queue can still redeliver.
          throw new CliError(
            `refusing to prune: the config breaks invariant 7\n${violations
              .map((v) => `  ${v.key}: ${v.message} (${v.fix})`)
              .join("\n")}`,
            EXIT.INVARIANT,
            violations,
          );
        }
        const now = Date.now();
        const before = now - days * DAY_MS;
        const archive = opts.dryRun ? undefined : new ArchiveWriter(config.journal.archiveDir, now);
        const result = await withJournal(config, async (j) => {
          try {
            return await j.prune({
              before,
              dryRun: opts.dryRun ?? false,
              actor: actorOf(opts.actor),
              ...(archive && { archive: (entry) => archive.write(entry) }),
            });
          } finally {
            archive?.close();
          }
        });
        const file = archive && archive.count > 0 ? archive.file : null;
        if (opts.json) {
          printJson({
            pruned: !opts.dryRun,
            dryRun: opts.dryRun ?? false,
            before,
            archive: file,
            ...result,
          });
          return;
        }
        process.stdout.write(
          `${opts.dryRun ? "would archive and remove" : "archived and removed"} what was recorded before ${formatTime(before)} (retention ${days}d)\n` +
            `${table(
              ["outputs", "runs", "effects", "events", "rejections", "jobs"],
              [
                [
                  result.outputs,
                  result.runs,
                  result.effects,
                  result.events,
                  result.rejections,
                  result.jobs,
                ],
              ],
            )}\n` +
            (file ? `archive ${file} (read it with idem show JOB --archive)\n` : ""),
        );
      },
    );
}
