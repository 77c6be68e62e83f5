import type { Command } from "commander";
import { WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

/**
 * Registers `idem jobs`: the jobs waiting for an output (queued, backing off, leased, lease ended)
 * with holder, delivery, lease end and next try; on JetStream also each agent's consumer counts.
 */
export function register(program: Command): void {
  program
    .command("jobs")
    .description(
      "jobs waiting for an output: queued, waiting for a retry, leased (by whom, until when) or with an ended lease",
    )
    .option("--agent <agent>", "only this agent's jobs")
    .option("--limit <n>", "at most n jobs (default 100)")
    .option("--json", "print JSON")
    .option("--wide", WIDE_HELP)
    .action(lazyAction(async () => (await import("../actions/jobs.js")).runJobs));
}
