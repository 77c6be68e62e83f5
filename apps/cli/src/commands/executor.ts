import type { Command } from "commander";
import { GRACE_HELP, LOG_FORMAT_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

/**
 * Registers `idem executor`: runs the executor (and the HTTP API unless `--no-api`) until SIGTERM
 * or SIGINT, then drains: waits up to --grace for the agents in flight, then kills their process
 * groups and gives their jobs back (a second signal does that at once). Exit 3 for a config that
 * breaks invariant 7 (before any connection), 2 for a bad `--port` or `IDEM_FAULT` or an API
 * beyond loopback without `api.token`, 1 when the journal fails for good (a supervisor restarts
 * it).
 */
export function register(program: Command): void {
  program
    .command("executor")
    .description(
      "runs the executor (consumer + HTTP submit API) until SIGTERM: records each agent's output before acking",
    )
    .option("--host <host>", "HTTP API address (default: api.host, 127.0.0.1)")
    .option("--port <n>", "HTTP API port (default: api.port; 0 picks a free one)")
    .option("--no-api", "do not serve the HTTP API")
    .option("--log-format <format>", LOG_FORMAT_HELP)
    .option("--grace <seconds>", GRACE_HELP)
    .action(lazyAction(async () => (await import("../actions/executor.js")).runExecutor));
}
