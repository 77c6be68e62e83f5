import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  const journal = program
    .command("journal")
    .description(
      "the journal itself: copy it to PostgreSQL, restore it from a backup, recover what a backup lacks",
    );
  journal
    .command("copy")
    .description(
      "copy the SQLite journal into an empty PostgreSQL journal, then compare every table's count and content hash; run again to resume after an interruption",
    )
    .requiredOption(
      "--to <url>",
      "the PostgreSQL journal: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
    )
    .option("--from <path>", "the SQLite journal file (default: the config's journal.path)")
    .option("--batch <n>", "rows per batch, each one PostgreSQL transaction (default 1000)")
    .option("--json", "print JSON")
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(lazyAction(async () => (await import("../actions/journal.js")).runJournalCopy));
  journal
    .command("restore")
    .description(
      "put a backup in place of the SQLite journal (the journal there is kept whole under broken/), then bring back from the kept journal every output and waiting job the backup lacks",
    )
    .argument("<backup>", "the backup file (idem backup)")
    .option("--json", "print JSON")
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(lazyAction(async () => (await import("../actions/journal-restore.js")).runRestore));
  journal
    .command("recover")
    .description(
      "bring back into the journal every output and waiting job another journal holds and it lacks (default: the journal a restore kept)",
    )
    .option("--from <path>", "the journal to read (default: the one the last restore kept)")
    .option("--dry-run", "only say what would come back")
    .option(
      "--accept-loss",
      "end a restore's notice without bringing anything back (the kept journal cannot be read)",
    )
    .option("--json", "print JSON")
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(lazyAction(async () => (await import("../actions/journal-restore.js")).runRecover));
}
