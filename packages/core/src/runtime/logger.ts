import { type Logger, pino } from "pino";

export type { Logger };

/** How a process's logger is named and how much it says. */
export interface CreateLoggerOptions {
  /** The `name` field of every line, e.g. `idem-executor`. */
  name: string;
  /** Pino level; default `IDEM_LOG_LEVEL`, else `info`. */
  level?: string;
}

/**
 * The structured logger of an idem process: one JSON line per entry (pino) on stderr, since
 * stdout belongs to command output, written synchronously so a line is out before a fault point
 * kills the process.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? process.env.IDEM_LOG_LEVEL ?? "info",
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that writes nothing, for embedding and tests. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
