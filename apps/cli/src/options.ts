import { defaultLogFormat, isLogFormat, LOG_FORMATS, type LogFormat } from "@idem/runtime";
import { parseSince, RUN_STATES, type RunState } from "@idem/schema";
import type { Command } from "commander";
import { CliError, EXIT } from "./context.js";

/** Parses a --since value (ISO-8601 or a duration back from now), exit 2 when it is neither. */
export function sinceOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseSince(value, Date.now());
  } catch (e) {
    throw new CliError(`--since: ${(e as Error).message}`, EXIT.USAGE);
  }
}

/** Parses a --state value (a run state), exit 2 when it is not one. */
export function stateOption(value: string | undefined): RunState | undefined {
  if (value === undefined) return undefined;
  if (!(RUN_STATES as readonly string[]).includes(value)) {
    throw new CliError(`--state: "${value}" is not one of ${RUN_STATES.join(", ")}`, EXIT.USAGE);
  }
  return value as RunState;
}

/**
 * --config of a nested subcommand (`idem dlq ls`) wherever it was given: on it, on its parent, or
 * before it on `idem`.
 */
export function nestedConfigOption(
  command: Command,
  opts: { config?: string },
): string | undefined {
  const parent = command.parent;
  return (
    opts.config ?? (parent?.opts().config as string | undefined) ?? parent?.parent?.opts().config
  );
}

/** Parses a --log-format value (json or pretty; default by whether stderr is a terminal), exit 2 when it is neither. */
export function logFormatOption(value: string | undefined): LogFormat {
  if (value === undefined) return defaultLogFormat();
  if (!isLogFormat(value)) {
    throw new CliError(
      `--log-format: "${value}" is not one of ${LOG_FORMATS.join(", ")}`,
      EXIT.USAGE,
    );
  }
  return value;
}

/**
 * Parses a --grace value: seconds (0 or more, decimals allowed), as milliseconds; undefined when
 * not given (the config's `queue.stopGraceMs` then). Exit 2 for anything else.
 */
export function graceOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 0) {
    throw new CliError(`--grace: "${value}" is not a number of seconds (0 or more)`, EXIT.USAGE);
  }
  return Math.round(seconds * 1000);
}
