import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("backup")
    .description(
      "a consistent copy of the journal while it is in use (SQLite online backup; on PostgreSQL pg_dump --format=custom)",
    )
    .argument("<file>", "where to write the copy")
    .option("--force", "overwrite FILE if it exists")
    .option("--json", "print JSON")
    .action(lazyAction(async () => (await import("../actions/backup.js")).runBackup));
}
