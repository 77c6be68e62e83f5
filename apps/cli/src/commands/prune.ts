import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("prune")
    .description(
      "archives to journal.archiveDir (JSONL) and removes outputs older than journal.retentionDays",
    )
    .option("--dry-run", "only count what would be archived and removed")
    .option("--actor <name>", "who prunes (default $IDEM_ACTOR or $USER)")
    .option("--json", "print JSON")
    .action(lazyAction(async () => (await import("../actions/prune.js")).runPrune));
}
