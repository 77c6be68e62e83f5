import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { openJournal } from "@idem/journal";
import type { Command } from "commander";
import { CliError, EXIT, loadConfig, printJson } from "../context.js";

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
        if (existsSync(target) && !opts.force) {
          throw new CliError(`${target} exists; pass --force to overwrite it`, EXIT.FAILED);
        }
        if (!existsSync(config.journal.path)) {
          throw new CliError(`no journal at ${config.journal.path}`, EXIT.FAILED);
        }
        if (!existsSync(dirname(target))) {
          throw new CliError(`folder ${dirname(target)} does not exist`, EXIT.FAILED);
        }
        // Write beside the target and rename, so a crash never leaves a half copy under FILE.
        const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
        const started = Date.now();
        const journal = await openJournal(config.journal.path, {
          synchronous: config.journal.synchronous,
        });
        try {
          await journal.backup(partial);
          fsyncPath(partial);
          renameSync(partial, target);
          fsyncPath(dirname(target));
        } catch (e) {
          rmSync(partial, { force: true });
          throw e;
        } finally {
          await journal.close();
        }
        const bytes = statSync(target).size;
        const ms = Date.now() - started;
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

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
