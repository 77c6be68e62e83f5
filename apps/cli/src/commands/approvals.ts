import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

/** `idem approve` and `idem reject`: a person's decision on a run awaiting approval. */
export function register(program: Command): void {
  program
    .command("approve")
    .description(
      "approves the effects a run awaits a person for (docs/approvals.md): bound to the recorded output, used once",
    )
    .argument("<job>", "job ID")
    .option(
      "--effects <list>",
      "only these effects, by index in the output (1,2); default all awaited",
    )
    .option("--reason <text>", "why (required; recorded with who approved)")
    .option("--as <name>", "who approves (default: $IDEM_ACTOR, $USER, the OS user)")
    .option("--json", "print JSON")
    .action(lazyAction(async () => (await import("../actions/approvals.js")).runApprove));

  program
    .command("reject")
    .description("rejects a run awaiting approval: it ends dead (class rejected) with the reason")
    .argument("<job>", "job ID")
    .option("--reason <text>", "why (required; recorded with who rejected)")
    .option("--as <name>", "who rejects (default: $IDEM_ACTOR, $USER, the OS user)")
    .option("--json", "print JSON")
    .action(lazyAction(async () => (await import("../actions/approvals.js")).runReject));
}
