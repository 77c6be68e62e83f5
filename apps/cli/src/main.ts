import { Command, CommanderError } from "commander";
import * as approvals from "./commands/approvals.js";
import * as audit from "./commands/audit.js";
import * as backup from "./commands/backup.js";
import * as consoleCommand from "./commands/console.js";
import * as demo from "./commands/demo.js";
import * as dlq from "./commands/dlq.js";
import * as doctor from "./commands/doctor.js";
import * as enqueue from "./commands/enqueue.js";
import * as executor from "./commands/executor.js";
import * as init from "./commands/init.js";
import * as interpreter from "./commands/interpreter.js";
import * as jobs from "./commands/jobs.js";
import * as journal from "./commands/journal.js";
import * as kinds from "./commands/kinds.js";
import * as ls from "./commands/ls.js";
import * as mcp from "./commands/mcp.js";
import * as prune from "./commands/prune.js";
import * as replay from "./commands/replay.js";
import * as show from "./commands/show.js";
import * as standIn from "./commands/stand-in.js";
import * as status from "./commands/status.js";
import * as submit from "./commands/submit.js";
import * as up from "./commands/up.js";
import * as version from "./commands/version.js";
import { CliError, EXIT, exitHolder } from "./exit.js";

export { provideKindImports } from "./kind-imports/provide-kind-imports.js";

import { setWide } from "./render/fit-table.js";

/**
 * Every command module by the group `idem --help` lists it under, as `gh` groups its commands:
 * `register(program)` adds its command (name, arguments, options, help); the command's
 * implementation under actions/ is imported only when it runs.
 */
const COMMAND_GROUPS: [string, { register(program: Command): void }[]][] = [
  ["Start:", [init, demo, standIn, version]],
  ["Run:", [up, executor, interpreter, consoleCommand, mcp]],
  ["Record and queue:", [submit, enqueue]],
  ["Look:", [status, jobs, ls, show, kinds, doctor]],
  ["Decide:", [approvals]],
  ["After an incident:", [audit, replay, dlq, backup, prune, journal]],
];

/** Builds the `idem` program. Actions set a non-zero exit code through `exitHolder` or throw. */
export function buildProgram(): Command {
  const program = new Command("idem")
    .description(
      "Exactly-once effects for AI agent fleets: a replay-safe journal and its interpreter",
    )
    .option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)")
    // Handed to `idem version` by main() before commander parses: listed here for the help.
    .option("-V, --version", "the versions of idem, Node, better-sqlite3 and SQLite")
    .enablePositionalOptions()
    .exitOverride();
  // `idem --config F status` and `idem status --config F` both work: the program-level value is
  // handed to the subcommand unless it has its own.
  program.hook("preAction", (_program, action) => {
    const global = program.opts<{ config?: string }>().config;
    if (global !== undefined && action.getOptionValue("config") === undefined) {
      action.setOptionValue("config", global);
    }
    setWide(action.getOptionValue("wide") === true);
  });
  for (const [heading, group] of COMMAND_GROUPS) {
    program.commandsGroup(heading);
    for (const c of group) c.register(program);
  }
  program.commandsGroup("Help:");
  program.helpCommand(true);
  for (const cmd of program.commands) {
    cmd.exitOverride();
    if (!cmd.options.some((o) => o.long === "--config")) {
      cmd.option("--config <file>", "config file (default: $IDEM_CONFIG or ./idem.config.json)");
    }
  }
  oneLineUsageErrors(program, "idem");
  return program;
}

/**
 * A usage error is one line on stderr (exit 2), never the whole help: commander's message, its
 * nearest-name suggestion for an unknown command or option, and where the help is. For example
 * `idem: unknown command 'stauts' (did you mean status?); idem --help lists them`.
 */
function oneLineUsageErrors(cmd: Command, path: string): void {
  cmd.configureOutput({
    outputError: (message, write) => write(`${usageLine(message, path)}\n`),
  });
  for (const sub of cmd.commands) oneLineUsageErrors(sub, `${path} ${sub.name()}`);
}

/** commander's error message (`error: …`, maybe a `(Did you mean …?)` line) as one line. */
export function usageLine(message: string, path: string): string {
  const text = message
    .trim()
    .replace(/^error: /, "")
    .replace(/\s*\n\(Did you mean (.+)\?\)$/, " (did you mean $1?)")
    .replace(/\s*\n\s*/g, " ");
  const help = /^unknown command/.test(text) ? "lists them" : "has the usage";
  return `idem: ${text}; ${path} --help ${help}`;
}

/** Runs the CLI and resolves to its exit code (docs/cli.md: 0 ok, 1 failed, 2 usage, 3 invariant). */
export async function main(argv: string[]): Promise<number> {
  endQuietlyOnClosedPipe();
  const program = buildProgram();
  // `idem --version` (or -V, first) is `idem version`, which loads the SQLite driver to report it.
  const [first, ...rest] = argv.slice(2);
  const args = first === "--version" || first === "-V" ? ["version", ...rest] : argv.slice(2);
  try {
    await program.parseAsync(args, { from: "user" });
    return exitHolder.code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (
        e.code === "commander.helpDisplayed" ||
        e.code === "commander.version" ||
        e.exitCode === 0
      )
        return EXIT.OK;
      return EXIT.USAGE;
    }
    // Loaded here, not at start: only a failing command needs the codes of @idem/schema's errors.
    const { exitCodeOf } = await import("./context.js");
    const { terminalText } = await import("./render/terminal-text.js");
    const code = exitCodeOf(e);
    const message = e instanceof Error ? e.message : String(e);
    // An error may quote an agent's or a target's text (a path, a git answer): escaped.
    process.stderr.write(`idem: ${terminalText(message, { lines: true })}\n`);
    if (!(e instanceof CliError) && process.env.IDEM_DEBUG && e instanceof Error)
      process.stderr.write(`${e.stack}\n`);
    return code;
  }
}

let pipeHandled = false;

/**
 * A closed pipe ends the command quietly. On stdout (`idem ls | head -2`) the command ends at once
 * with exit 0: the reader has what it wanted. On stderr nothing more can be said, so what is
 * written there is dropped and the command ends with its own code. Handled once here, not per
 * command; any other stream error stays fatal.
 */
function endQuietlyOnClosedPipe(): void {
  if (pipeHandled) return;
  pipeHandled = true;
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(EXIT.OK);
    throw e;
  });
  process.stderr.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
  });
}
