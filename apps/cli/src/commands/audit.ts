import { buildAudit, isAuditClean, openTargets } from "@idem/core";
import type { Command } from "commander";
import { EXIT, exitHolder, loadConfig, printJson, withReadonlyJournal } from "../context.js";
import { sinceOption } from "../options.js";
import { printAudit } from "../render/print-audit.js";

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
      // The first audit of a remote repo on this host clones its mirror: progress on a terminal.
      const effects = openTargets(
        config,
        process.stderr.isTTY
          ? {
              onCloneProgress: (p) =>
                process.stderr.write(`\rcloning ${p.alias}: ${p.stage} ${p.percent}%   `),
            }
          : {},
      );
      const report = await withReadonlyJournal(config, (j) =>
        buildAudit(config, j, effects, since),
      ).finally(() => effects.close());
      if (!isAuditClean(report)) exitHolder.code = EXIT.INVARIANT;
      if (opts.json) {
        printJson(report);
        return;
      }
      process.stdout.write(printAudit(report));
    });
}
