import { buildAudit, isAuditClean, openEffects, pendingRestore } from "@idem/core";
import type { Command } from "commander";
import { EXIT, exitHolder, loadConfigWithKinds, printJson } from "../context.js";
import { withExistingJournal } from "../ops/existing-journal.js";
import { sinceOption } from "../options.js";
import { printAudit } from "../render/print-audit.js";
import { renderPendingRestore } from "../render/print-restore.js";

/** `idem audit`, imported when it runs (its options and help: commands/audit.ts). */
export async function runAudit(
  opts: { since?: string; json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const config = await loadConfigWithKinds(cmd.optsWithGlobals());
  const since = sinceOption(opts.since);
  // The first audit of a remote repo on this host clones its mirror: progress on a terminal.
  const effects = openEffects(
    config,
    process.stderr.isTTY
      ? {
          onCloneProgress: (p) =>
            process.stderr.write(`\rcloning ${p.alias}: ${p.stage} ${p.percent}%   `),
        }
      : {},
  );
  const { report, restore } = await withExistingJournal(config, async (j) => ({
    report: await buildAudit(config, j, effects, since),
    // A restore whose kept journal still holds outputs or jobs this one lacks: not clean yet.
    restore: (await pendingRestore(config, j)) ?? null,
  })).finally(() => effects.close());
  if (!isAuditClean(report) || (restore && !restore.missing?.complete))
    exitHolder.code = EXIT.INVARIANT;
  if (opts.json) {
    printJson({ ...report, restore });
    return;
  }
  process.stdout.write(`${restore ? renderPendingRestore(restore) : ""}${printAudit(report)}`);
}
