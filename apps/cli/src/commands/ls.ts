import type { Command } from "commander";
import { RUN_STATE_NAMES, WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("ls")
    .description("outputs with their latest run state")
    .option("--state <state>", `latest run state: ${RUN_STATE_NAMES.join(", ")}`)
    .option("--agent <agent>", "only this agent's outputs")
    .option("--since <time>", "recorded since an ISO-8601 time or a duration back (15m, 2h, 7d)")
    .option("--limit <n>", "at most n rows", (v) => Number.parseInt(v, 10))
    .option("--json", "print JSON")
    .option("--wide", WIDE_HELP)
    .action(lazyAction(async () => (await import("../actions/ls.js")).runLs));
}
