import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("demo")
    .description(
      "the main job end to end on the embedded default, with crashes injected, ending in the audit",
    )
    .option("--dir <dir>", "workspace to create (missing or empty; default: a new temp dir)")
    .option("--jobs <n>", "jobs to enqueue", "30")
    .option("--crashes <n>", "about how many times to kill a process at a random fault point", "6")
    .option("--seed <n>", "seed of the random fault points (default: random)")
    .option("--timeout <s>", "give up after this many seconds", "120")
    .option("--json", "print the final audit as JSON")
    .action(lazyAction(async () => (await import("../actions/demo.js")).runDemoCommand));
}
