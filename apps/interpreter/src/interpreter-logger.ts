import { type Logger, pino } from "pino";

export type { Logger };

/**
 * The interpreter's structured logger: one JSON line per transition on stderr (stdout belongs to
 * command output), written synchronously so a line is out before a fault point kills the process.
 * Level from `IDEM_LOG_LEVEL` (default `info`).
 */
export function createInterpreterLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino(
    {
      name: options.name ?? "idem-interpreter",
      level: options.level ?? process.env.IDEM_LOG_LEVEL ?? "info",
    },
    pino.destination({ fd: 2, sync: true }),
  );
}
