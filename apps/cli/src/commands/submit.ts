import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("submit")
    .description(
      "record an AgentOutput, or a batch (a JSON array or JSON Lines), from FILE or - (stdin): recorded, duplicate, conflict or invalid",
    )
    .argument(
      "<file>",
      "the AgentOutput JSON file (one output, an array of outputs, or one output per line), or - for stdin",
    )
    .option("--json", "print JSON (an array, one entry per output, for a batch)")
    .action(lazyAction(async () => (await import("../actions/submit.js")).runSubmit));
}
