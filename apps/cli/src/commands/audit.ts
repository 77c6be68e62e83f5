import type { Command } from "commander";
import { WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("audit")
    .description(
      "reconciliation of the journal against the targets; exit 3 on a duplicate or drift",
    )
    .option("--since <time>", "from an ISO-8601 time or a duration back (15m, 2h, 7d)")
    .option("--json", "print JSON")
    .option("--wide", WIDE_HELP)
    .action(lazyAction(async () => (await import("../actions/audit.js")).runAudit));
}
