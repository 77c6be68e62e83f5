// Help texts that name values of idem's packages, spelled out here so that registering the commands
// (and `idem --help`) imports none of them; apps/cli/test/start-up.test.ts keeps them equal to the
// packages' lists.

/** The run states `--state` takes: @idem/schema's RUN_STATES. */
export const RUN_STATE_NAMES = [
  "pending",
  "running",
  "failed",
  "awaiting",
  "done",
  "dead",
] as const;

/** The log formats `--log-format` takes: @idem/core's LOG_FORMATS. */
export const LOG_FORMAT_NAMES = ["json", "pretty"] as const;

/** The help of `--log-format` on the commands that log (executor, interpreter, up, console). */
export const LOG_FORMAT_HELP = `log lines as ${LOG_FORMAT_NAMES.join(" or ")} (default: pretty on a terminal, json otherwise)`;

/** The default of `queue.stopGraceMs` in seconds: @idem/schema's, named in the help of --grace. */
export const STOP_GRACE_DEFAULT_S = 60;

/** The help of `--grace` on `idem executor` and `idem up`. */
export const GRACE_HELP = `on SIGTERM/SIGINT (Ctrl-C), how long to wait for the agents in flight before killing them (their process groups) and giving their jobs back; a second Ctrl-C does it at once (default: queue.stopGraceMs, ${STOP_GRACE_DEFAULT_S} s)`;

/** The help of `--wide` on the commands that print tables. */
export const WIDE_HELP =
  "tables at full width: every column, owner IDs in full, long texts whole (default: fitted to the terminal, 120 columns when not one)";
