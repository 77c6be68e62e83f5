import { resolve } from "node:path";
import { backupJournal } from "@idem/core";
import type { Command } from "commander";
import {
  CliError,
  EXIT,
  journalLocation,
  loadConfig,
  onPostgres,
  openConfiguredJournal,
  printJson,
} from "../context.js";

/** `idem backup`, imported when it runs (its options and help: commands/backup.ts). */
export async function runBackup(
  file: string,
  opts: { force?: boolean; json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const config = loadConfig(cmd.optsWithGlobals());
  const target = resolve(file);
  const journal = journalLocation(config);
  if (!onPostgres(config) && target === resolve(config.journal.path)) {
    throw new CliError("the backup file is the journal itself", EXIT.USAGE);
  }
  const { bytes, ms } = await backupJournal(target, {
    force: opts.force ?? false,
    open: () => openConfiguredJournal(config),
  });
  if (opts.json) {
    printJson({ file: target, journal, bytes, ms });
    return;
  }
  const restore = onPostgres(config)
    ? `restore: stop idem, pg_restore --clean --if-exists --dbname=${journal} ${target} (the password in PGPASSWORD), run idem doctor`
    : `restore: stop idem, idem journal restore ${target} (keeps the journal in place, brings back what the backup lacks)`;
  process.stdout.write(
    `backed up ${journal}\n       to ${target} (${bytes} bytes, ${ms} ms)\n${restore}\n`,
  );
}
