import { resolve } from "node:path";
import { backupJournal } from "@idem/core";
import type { Command } from "commander";
import { CliError, EXIT, loadConfig, openExistingJournal, printJson } from "../context.js";

export function register(program: Command): void {
  program
    .command("backup")
    .description("a consistent copy of the journal while it is in use (SQLite online backup)")
    .argument("<file>", "where to write the copy")
    .option("--force", "overwrite FILE if it exists")
    .option("--json", "print JSON")
    .action(
      async (
        file: string,
        opts: { force?: boolean; json?: boolean; config?: string },
        cmd: Command,
      ) => {
        const config = loadConfig(cmd.optsWithGlobals());
        const target = resolve(file);
        if (target === resolve(config.journal.path)) {
          throw new CliError("the backup file is the journal itself", EXIT.USAGE);
        }
        const { bytes, ms } = await backupJournal(target, {
          force: opts.force ?? false,
          open: () => openExistingJournal(config),
        });
        if (opts.json) {
          printJson({ file: target, journal: config.journal.path, bytes, ms });
          return;
        }
        process.stdout.write(
          `backed up ${config.journal.path}\n       to ${target} (${bytes} bytes, ${ms} ms)\n` +
            `restore: stop idem, copy it over ${config.journal.path} (remove its -wal and -shm), run idem doctor\n`,
        );
      },
    );
}
