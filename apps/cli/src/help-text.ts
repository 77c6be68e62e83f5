// Help texts that name values of idem's packages, spelled out here so that registering the commands
// (and `idem --help`) imports none of them; apps/cli/test/start-up.test.ts keeps them equal to the
// packages' lists.

/** The run states `--state` takes: @idem/schema's RUN_STATES. */
export const RUN_STATE_NAMES = ["pending", "running", "failed", "done", "dead"] as const;

/** The log formats `--log-format` takes: @idem/core's LOG_FORMATS. */
export const LOG_FORMAT_NAMES = ["json", "pretty"] as const;

/** The help of `--log-format` on the commands that log (executor, interpreter, up, console). */
export const LOG_FORMAT_HELP = `log lines as ${LOG_FORMAT_NAMES.join(" or ")} (default: pretty on a terminal, json otherwise)`;
