import { type Logger, pino } from "pino";

export type { Logger };

/**
 * The executor's structured logger: JSON lines on stderr (stdout belongs to command output), level
 * from `IDEM_LOG_LEVEL` (default `info`).
 */
export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino(
    {
      name: options.name ?? "idem-executor",
      level: options.level ?? process.env.IDEM_LOG_LEVEL ?? "info",
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that writes nothing, for embedding and tests. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
