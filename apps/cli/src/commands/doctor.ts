import type { Command } from "commander";
import { WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("doctor")
    .description(
      "checks the config invariants, the journal's integrity, the targets and NATS; exit 3 names each violation",
    )
    .option(
      "--network",
      "also contact the kinds' targets (http, GitHub, Slack) and name who each token acts as",
    )
    .option("--timeout <ms>", "how long one network check may take", (v) => Number.parseInt(v, 10))
    .option("--json", "print JSON")
    .option("--wide", WIDE_HELP)
    .action(lazyAction(async () => (await import("../actions/doctor.js")).runDoctorCommand));
}
