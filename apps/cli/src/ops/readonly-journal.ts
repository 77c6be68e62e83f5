import { existsSync } from "node:fs";
import { type JournalStore, openJournal } from "@idem/journal";
import type { Config } from "@idem/schema";
import { CliError } from "../context.js";

/**
 * Runs `fn` with the config's journal opened read-only: nothing it does can write, so a dry run or
 * an audit leaves the file byte-identical. A missing journal is an error, never created.
 */
export async function withReadonlyJournal<T>(
  config: Config,
  fn: (journal: JournalStore) => Promise<T>,
): Promise<T> {
  if (!existsSync(config.journal.path)) {
    throw new CliError(`no journal at ${config.journal.path} (run idem init, or check --config)`);
  }
  const journal = await openJournal(config.journal.path, { readonly: true });
  try {
    return await fn(journal);
  } finally {
    await journal.close();
  }
}
