import { existsSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { initialConfig, initWorkspace } from "@idem/core";
import {
  CliError,
  CONFIG_FILE,
  configPath,
  EXIT,
  journalLocation,
  loadConfig,
  printJson,
} from "../context.js";

/** `idem init`, imported when it runs (its options and help: commands/init.ts). */
export async function runInit(opts: {
  force?: boolean;
  json?: boolean;
  config?: string;
}): Promise<void> {
  const file = opts.config ? configPath(opts) : resolve(CONFIG_FILE);
  if (existsSync(file) && !opts.force) {
    throw new CliError(`${file} exists already (use --force to overwrite)`, EXIT.FAILED);
  }
  writeFileSync(file, `${JSON.stringify(initialConfig(), null, 2)}\n`);
  const config = loadConfig({ config: file });
  await initWorkspace(config);
  // With IDEM_JOURNAL_URL set, the journal's tables are made in that PostgreSQL database.
  const journal = journalLocation(config);
  if (opts.json) printJson({ config: file, journal });
  else process.stdout.write(`wrote ${file}\ncreated journal ${journal}\n`);
}
