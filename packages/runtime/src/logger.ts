import { writeSync } from "node:fs";
import { createRequire } from "node:module";
import { redactUrl } from "@idem/schema";
import type * as Pino from "pino";
import type { DestinationStream, Logger } from "pino";
import type * as PinoPretty from "pino-pretty";

export type { Logger };

// pino is required when the first logger is made and pino-pretty when the first pretty one is:
// importing @idem/core (a command that logs nothing, or only JSON) loads neither. Both are
// CommonJS, so the loggers are still made synchronously.
const requireCjs = createRequire(import.meta.url);
const pinoModule = (): typeof Pino => requireCjs("pino") as typeof Pino;

/** How log lines are written: one JSON object per line, or human-readable text. */
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Whether `value` names a log format (`json` or `pretty`). */
export const isLogFormat = (value: unknown): value is LogFormat =>
  (LOG_FORMATS as readonly unknown[]).includes(value);

/** How a process's logger is named and how much it says. */
export interface CreateLoggerOptions {
  /** The `name` field of every line, e.g. `idem-executor`. */
  name: string;
  /** Pino level; default `IDEM_LOG_LEVEL`, else `info`. */
  level?: string;
  /** Default: `pretty` when stderr is a terminal, `json` otherwise (a pipe, a file, a supervisor). */
  format?: LogFormat;
}

/** The log format a process uses when none is asked for: pretty on a terminal, JSON otherwise. */
export function defaultLogFormat(): LogFormat {
  return process.stderr.isTTY ? "pretty" : "json";
}

/**
 * The structured logger of an idem process, on stderr (stdout belongs to command output): one
 * JSON line per entry, or the same entry as human-readable text (`pretty`: the same message and
 * fields). Both are written synchronously, in this thread, so a line is out before a fault point
 * kills the process; no worker-thread transport can lose it. Every line has its URLs' credentials
 * redacted (`redactUrl`) whatever field or error carries them (docs/security.md).
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const format = options.format ?? defaultLogFormat();
  const { pino } = pinoModule();
  return pino(
    {
      name: options.name,
      level: options.level ?? process.env.IDEM_LOG_LEVEL ?? "info",
    },
    format === "pretty" ? prettyStderr() : redacted(pino.destination({ fd: 2, sync: true })),
  );
}

/** A destination that writes every line with its URLs' credentials redacted. */
function redacted(inner: DestinationStream): DestinationStream {
  return { write: (line: string) => inner.write(redactUrl(line)) };
}

/** The fields that hold an owner ID (`<host>:<pid>:<random>@<boot id>/<pid ns>/<start time>`). */
const OWNER_FIELDS = ["owner", "holder", "previousOwner", "leaseOwner"];

/**
 * A JSON log line as the pretty form shows it, one line per entry: the job ID leads the message,
 * an agent's output line is the message itself (`writer stderr: working on note-1`), and owner
 * IDs are cut to `<host>:<pid>:<random>` (the JSON form keeps every field as it is). A line that is
 * not a JSON object is left alone.
 */
export function foldForPretty(line: string): string {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return line;
    entry = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  let msg = typeof entry.msg === "string" ? entry.msg : "";
  for (const stream of ["stderr", "stdout"]) {
    const text = entry[stream];
    if (typeof text !== "string") continue;
    msg = `${typeof entry.agent === "string" ? `${entry.agent} ` : ""}${stream}: ${text}`;
    delete entry[stream];
    delete entry.agent;
  }
  if (typeof entry.jobId === "string") {
    msg = msg === "" ? entry.jobId : `${entry.jobId}: ${msg}`;
    delete entry.jobId;
  }
  for (const field of OWNER_FIELDS) {
    const owner = entry[field];
    if (typeof owner === "string" && owner.indexOf("@") > 0)
      entry[field] = owner.slice(0, owner.indexOf("@"));
  }
  entry.msg = msg;
  return JSON.stringify(entry);
}

/** pino-pretty's formatter over a synchronous write to fd 2 (colours on a terminal without NO_COLOR). */
function prettyStderr(): DestinationStream {
  const { prettyFactory } = requireCjs("pino-pretty") as typeof PinoPretty;
  const pretty = prettyFactory({
    colorize: Boolean(process.stderr.isTTY) && !process.env.NO_COLOR,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
    singleLine: true,
  });
  return {
    write(line: string) {
      let bytes = Buffer.from(pretty(foldForPretty(redactUrl(line))));
      while (bytes.length > 0) {
        try {
          bytes = bytes.subarray(writeSync(2, bytes));
        } catch (e) {
          // As pino's own synchronous destination: a full non-blocking pipe is retried, any other
          // failure (a closed pipe) is the caller's, as it is in JSON form.
          if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
        }
      }
    },
  };
}

/** A logger that writes nothing, for embedding and tests. */
export function silentLogger(): Logger {
  return pinoModule().pino({ level: "silent" });
}
