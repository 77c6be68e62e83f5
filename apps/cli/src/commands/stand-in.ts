import { Argument, type Command } from "commander";
import { lazyAction } from "../lazy-action.js";

/**
 * Registers `idem stand-in github|slack`: a stand-in of the service on 127.0.0.1 (in memory) to try
 * the `github.*` or `slack.message` kinds without the real one, until Ctrl-C or SIGTERM. It prints
 * the variable to export and the config section that points at it (docs/kinds/github.md).
 */
export function register(program: Command): void {
  program
    .command("stand-in")
    .description(
      "serves a stand-in of GitHub or Slack on 127.0.0.1 to try their kinds locally, printing the config and the token to use",
    )
    .addArgument(new Argument("<service>", "the service").choices(["github", "slack"]))
    .option("--port <n>", "listen on this port (default: a free one)")
    .option("--json", "print { service, url, env, config } as one JSON line, then serve")
    .action(lazyAction(async () => (await import("../actions/stand-in.js")).runStandIn));
}
