import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("enqueue")
    .description(
      "enqueues a Job, or a batch (a JSON array or JSON Lines), from FILE or - (JetStream with Nats-Msg-Id = jobId, or the embedded queue); a duplicate is ok",
    )
    .argument(
      "<file>",
      "the Job JSON file (one Job, an array of Jobs, or one Job per line), or - for stdin",
    )
    .option("--json", "print JSON (an array, one entry per job, for a batch)")
    .option("--concurrency <n>", "jobs in flight at once in a batch", "16")
    .option(
      "--check-agents",
      "on JetStream too, refuse jobs for agents not in the config's agents (always on the embedded queue)",
    )
    .action(lazyAction(async () => (await import("../actions/enqueue.js")).runEnqueue));
}
