import type { Command } from "commander";
import { lazyAction } from "../lazy-action.js";

/**
 * Registers `idem version` (also `idem --version` and `-V`, which main.ts hands to it): the
 * versions of idem, Node, better-sqlite3 and SQLite; exit 1 when the SQLite driver does not load.
 */
export function register(program: Command): void {
  program
    .command("version")
    .description("the versions of idem, Node, better-sqlite3 and SQLite (also idem --version)")
    .option("--json", "print JSON")
    .action(lazyAction(async () => (await import("../actions/version.js")).runVersion));
}
