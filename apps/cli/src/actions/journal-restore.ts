import { resolve } from "node:path";
import { acceptRestoreLoss, type RecoveryReport, recoverFrom, restoreJournal } from "@idem/core";
import type { Command } from "commander";
import {
  actorOf,
  CliError,
  EXIT,
  exitHolder,
  loadConfigWithKinds,
  printJson,
  table,
} from "../context.js";
import { nestedConfigOption } from "../options.js";

/** A line on stderr per output or job brought back, on a terminal (none with --json). */
const progress = (json: boolean) =>
  json || !process.stderr.isTTY
    ? undefined
    : (what: "output" | "job", jobId: string) =>
        process.stderr.write(`\rbrought back ${what} ${jobId.slice(0, 60)}\x1b[K`);

/** What came back, as a table and the lists people act on. */
function renderRecovery(r: RecoveryReport, dryRun: boolean): string {
  const verb = dryRun ? "would come back" : "came back";
  let out = `${table(
    ["", verb, "there already", "refused"],
    [
      [
        "outputs",
        r.outputs.recorded.length,
        r.outputs.present,
        r.outputs.conflicts.length + r.outputs.invalid.length,
      ],
      [
        "waiting jobs",
        r.jobs.enqueued.length,
        r.jobs.present + r.jobs.answered,
        r.jobs.conflicts.length + r.jobs.invalid.length,
      ],
    ],
  )}\n`;
  if (r.jobs.enqueued.length > 0)
    out += `jobs ${dryRun ? "to enqueue" : "enqueued"}: ${r.jobs.enqueued.join(" ")}\n`;
  for (const id of r.outputs.conflicts)
    out += `output ${id}: the journal holds another output for this job; kept as it is\n`;
  for (const i of r.outputs.invalid) out += `output ${i.jobId ?? "?"} refused: ${i.problem}\n`;
  for (const id of r.jobs.conflicts)
    out += `job ${id}: the journal has this job ID with another input; kept as it is\n`;
  for (const i of r.jobs.invalid) out += `job ${i.jobId} unreadable: ${i.problem}\n`;
  if (r.deadLettered.length > 0)
    out += `dead-lettered there, not here (enqueue them again once their cause is fixed): ${r.deadLettered.join(" ")}\n`;
  for (const u of r.unreadable) out += `could not read ${u}\n`;
  return out;
}

/** The exit of a recovery: 0 whole, 1 when part of the source could not be read or brought back. */
const exitOf = (r: RecoveryReport | null) => (r === null || r.complete ? EXIT.OK : EXIT.FAILED);

/** `idem journal restore BACKUP`, imported when it runs (its options and help: commands/journal.ts). */
export async function runRestore(
  backup: string,
  opts: { json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const config = await loadConfigWithKinds({ config: nestedConfigOption(cmd, opts) });
  const json = opts.json ?? false;
  const onItem = progress(json);
  const result = await restoreJournal(config, resolve(backup), {
    actor: actorOf(),
    ...(onItem && { onItem }),
  });
  if (onItem) process.stderr.write("\n");
  exitHolder.code = exitOf(result.recovery);
  if (json) {
    printJson(result);
    return;
  }
  process.stdout.write(
    `restored ${result.journal}\n    from ${result.backup}\n` +
      (result.kept === null
        ? "no journal was in place: nothing to bring back from; jobs enqueued after the backup are not known here\n"
        : `the journal that was there is kept at ${result.kept}\n`),
  );
  if (result.recovery) process.stdout.write(renderRecovery(result.recovery, false));
  process.stdout.write(
    result.recovery && !result.recovery.complete
      ? "not everything came back: idem jobs and idem audit say so until it does (idem journal recover, or --accept-loss)\nnext: idem doctor, then start idem again\n"
      : "next: idem doctor, then start idem again\n",
  );
}

/** `idem journal recover`, imported when it runs (its options and help: commands/journal.ts). */
export async function runRecover(
  opts: {
    from?: string;
    dryRun?: boolean;
    acceptLoss?: boolean;
    json?: boolean;
    config?: string;
  },
  cmd: Command,
): Promise<void> {
  const config = await loadConfigWithKinds({ config: nestedConfigOption(cmd, opts) });
  const json = opts.json ?? false;
  if (opts.acceptLoss) {
    if (opts.from !== undefined || opts.dryRun)
      throw new CliError("--accept-loss takes neither --from nor --dry-run", EXIT.USAGE);
    const marker = acceptRestoreLoss(config);
    if (json) printJson({ forgotten: marker ?? null });
    else
      process.stdout.write(
        marker
          ? `the restore of ${marker.at} is done: what ${marker.kept ?? "the lost journal"} held and did not come back is given up\n`
          : "no restore waits for its recovery\n",
      );
    return;
  }
  const onItem = progress(json);
  const { from, report } = await recoverFrom(
    config,
    opts.from === undefined ? undefined : resolve(opts.from),
    { dryRun: opts.dryRun ?? false, actor: actorOf(), ...(onItem && { onItem }) },
  );
  if (onItem) process.stderr.write("\n");
  exitHolder.code = opts.dryRun ? EXIT.OK : exitOf(report);
  if (json) {
    printJson({ from, dryRun: opts.dryRun ?? false, ...report });
    return;
  }
  process.stdout.write(`from ${from}\n${renderRecovery(report, opts.dryRun ?? false)}`);
}
