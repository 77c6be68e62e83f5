import type { Command } from "commander";
import { WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

export function register(program: Command): void {
  program
    .command("replay")
    .description(
      "a new run generation for each selected output; --dry-run probes every effect and prints the plan, changing nothing",
    )
    .option("--job <jobs...>", "these job IDs")
    .option("--agent <agent>", "this agent's outputs")
    .option("--since <time>", "recorded since an ISO-8601 time or a duration back (15m, 2h, 7d)")
    .option("--state <state>", "whose latest run is in this state (done, dead, ...)")
    .option("--all", "every output")
    .option("--dry-run", "probe and print the plan; change nothing, not even the journal")
    .option("--yes", "do not ask for confirmation (scripts)")
    .option(
      "--now",
      "drive the interpretation here, with a progress bar, instead of leaving it to a running interpreter",
    )
    .option("--force-unprobeable", "send again effects that cannot be probed and were sent before")
    .option("--kind <kinds...>", "only effects of these kinds (git.commit, http.request, ...)")
    .option("--repo <repos...>", "only effects on these repos (git.commit, git.patch)")
    .option("--root <roots...>", "only effects under these roots (file.write)")
    .option("--target <targets...>", "only effects to these http or publish targets")
    .option("--reason <text>", "why (required unless --dry-run; recorded with the new generations)")
    .option("--actor <name>", "who replays (default $IDEM_ACTOR or $USER)")
    .option("--json", "print JSON")
    .option("--wide", WIDE_HELP)
    .action(lazyAction(async () => (await import("../actions/replay.js")).runReplay));
}
