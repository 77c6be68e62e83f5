import type { Command } from "commander";
import { WIDE_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

const CONFIG_HELP =
  "config file (default: $IDEM_CONFIG or ./idem.config.json; none: idem's defaults)";

/**
 * Registers `idem kinds` (the effect kinds this config can use) and `idem kinds test <module>` (the
 * conformance drill of a kind against its real target). docs/cli.md has their JSON and exit codes.
 */
export function register(program: Command): void {
  const kinds = program
    .command("kinds")
    .description(
      "lists the effect kinds this config can use, idem's own and the config's (kinds.<name>): guarantee, aliases, probe and scan",
    )
    .option("--json", "print JSON, with each kind's JSON Schema")
    .option("--wide", WIDE_HELP)
    .option("--config <file>", CONFIG_HELP)
    .action(lazyAction(async () => (await import("../actions/kinds.js")).runKinds));

  kinds
    .command("test")
    .description(
      "the conformance drill: runs a kind against its real target with its own samples, with the interpreter SIGKILLed at every fault point; exit 0 exactly once in effect, 1 can end uncertain, 3 broken",
    )
    .argument(
      "<module>",
      "the kind's module (a path or a package name), or a registered kind's name",
    )
    .option("--options <json>", "the kind's options (default: the config's kinds.<name>.options)")
    .option("--outputs <n>", "outputs interpreted under SIGKILLs (1 to 200)", "6")
    .option("--kind <name>", "the kind to drill when the module exports several")
    .option(
      "--in-process",
      "@idem/kit/test's tester instead of the drill: a throw at every fault point and around every ctx.fetch request, in this process; exit 0 ok, 3 broken",
    )
    .option("--keep", "keep the drill's workspace (its config and journal) and print where")
    .option("--json", "print the report as JSON")
    .option("--wide", WIDE_HELP)
    .option("--config <file>", CONFIG_HELP)
    .action(lazyAction(async () => (await import("../actions/kinds.js")).runKindsTest));

  kinds
    .command("new")
    .description(
      "writes a kind of your own to start from (<dir>/<name>.mjs, a note per effect as a file), its test in process, and its entry in the config, so that idem kinds test <name> passes as written",
    )
    .argument("<name>", "the kind's name, <namespace>.<name> (acme.note)")
    .option("--dir <folder>", "where the kind's files go, relative to the config's folder", "kinds")
    .option(
      "--config <file>",
      "the config to register it in (default: $IDEM_CONFIG or ./idem.config.json; made when missing)",
    )
    .action(lazyAction(async () => (await import("../actions/kinds-new.js")).runKindsNew));
}
