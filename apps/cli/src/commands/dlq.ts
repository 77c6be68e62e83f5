import type { Command } from "commander";
import { WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  const dlq = program
    .command("dlq")
    .description(
      "dead runs, uncertain effects and dead-lettered jobs, and the human decision on them",
    );

  dlq
    .command("ls")
    .description(
      "dead runs (class, attempts, last error), uncertain effects and dead-lettered jobs",
    )
    .option("--json", "print JSON")
    .option("--wide", WIDE_HELP)
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(lazyAction(async () => (await import("../actions/dlq.js")).runDlqLs));

  dlq
    .command("retry")
    .description(
      "a dead run: a new generation (probes everything again); a dead-lettered job: re-enqueue it",
    )
    .argument("<job>", "job ID")
    .option("--actor <name>", "who decides (default: $USER)")
    .option("--json", "print JSON")
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(lazyAction(async () => (await import("../actions/dlq.js")).runDlqRetry));

  dlq
    .command("resolve")
    .description(
      "settles the uncertain effect of a dead run as applied or skipped; the run goes on with the rest",
    )
    .argument("<job>", "job ID")
    .option("--applied", "the effect did happen")
    .option("--skipped", "the effect did not happen and must not be sent")
    .option("--reason <text>", "why (required; recorded with the actor)")
    .option("--actor <name>", "who decides (default: $USER)")
    .option("--json", "print JSON")
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    .action(lazyAction(async () => (await import("../actions/dlq.js")).runDlqResolve));
}
