import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { initialConfig, initWorkspace } from "@idem/core";
import { openJournalStore } from "@idem/journal";
import { type Config, isIdemError } from "@idem/schema";
import {
  CliError,
  CONFIG_FILE,
  configPath,
  EXIT,
  journalLocation,
  loadConfig,
  printJson,
} from "../context.js";
import { checkExampleFolder, exampleConfig, writeExampleProject } from "../init/example-project.js";

/**
 * `idem init`, imported when it runs (its options and help: commands/init.ts). With `--journal`
 * it writes no config: it creates the journal an existing config names (idempotent), the way out
 * of "no journal" for a config written by hand, copied, or pointed at a new PostgreSQL database.
 */
export async function runInit(opts: {
  force?: boolean;
  journal?: boolean;
  example?: boolean;
  json?: boolean;
  config?: string;
}): Promise<void> {
  if (opts.journal) {
    if (opts.example) throw new CliError("--example writes a config: drop --journal", EXIT.USAGE);
    return initJournal(opts);
  }
  const file = opts.config ? configPath(opts) : resolve(CONFIG_FILE);
  if (existsSync(file) && !opts.force) {
    throw new CliError(
      `${file} exists already: to create its journal, idem init --journal (the config is kept); to overwrite it, --force`,
      EXIT.FAILED,
    );
  }
  const dir = dirname(file);
  if (opts.example) checkExampleFolder(dir);
  const written = opts.example ? exampleConfig(initialConfig()) : initialConfig();
  // It holds api.token: readable by its owner only, also when --force overwrote an older file.
  writeFileSync(file, `${JSON.stringify(written, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  if (opts.example) writeExampleProject(dir);
  const config = loadConfig({ config: file });
  await initWorkspace(config);
  // With IDEM_JOURNAL_URL set, the journal's tables are made in that PostgreSQL database.
  const journal = journalLocation(config);
  if (opts.json) {
    printJson({ config: file, journal, ...(opts.example && { example: dir }) });
    return;
  }
  process.stdout.write(
    opts.example
      ? `wrote ${file}, agent.mjs, job.json, README.md, repos/notes (a git repository) and outbox/\n` +
          `created journal ${journal}\n` +
          "next: idem up, then in a second terminal idem enqueue job.json (README.md walks through it)\n"
      : `wrote ${file}\ncreated journal ${journal}\n` +
          'next: add an agent under "agents" (and the repos or roots its effects name) to the config, then idem up;\n' +
          "      or start from a runnable project: idem init --example, in an empty folder\n",
  );
}

/** `idem init --journal`: the journal of the config `loadConfig` finds, made if missing. */
async function initJournal(opts: { force?: boolean; json?: boolean; config?: string }) {
  if (opts.force) throw new CliError("--journal keeps the config: drop --force", EXIT.USAGE);
  // --config, $IDEM_CONFIG or ./idem.config.json, as every command: none found is exit 2.
  const config = loadConfig(opts);
  const journal = journalLocation(config);
  const existed = await journalExists(config);
  await initWorkspace(config);
  if (opts.json) printJson({ config: config.file, journal, created: !existed });
  else
    process.stdout.write(
      `${existed ? "journal exists" : "created journal"} ${journal} for ${config.file}\n`,
    );
}

/** Whether the config's journal is there: the SQLite file, or the tables in the PostgreSQL database. */
async function journalExists(config: Config): Promise<boolean> {
  const url = config.journal.url;
  if (url === null) return existsSync(config.journal.path);
  try {
    await (await openJournalStore({ url }, { readonly: true })).close();
    return true;
  } catch (e) {
    if (isIdemError(e, "NOT_FOUND")) return false;
    throw e;
  }
}
