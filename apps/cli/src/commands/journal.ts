import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  const journal = program
    .command("journal")
    .description("the journal itself: copy it to PostgreSQL");
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
}
