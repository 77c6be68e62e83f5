import { resolve } from "node:path";
import {
  copyJournal,
  type JournalCopyFaultPoint,
  type JournalCopyProgress,
  type JournalCopyReport,
} from "@idem/journal";
import { createFaultHook, isIdemError, redactSecret, redactUrl } from "@idem/schema";
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { CliError, EXIT, exitHolder, loadConfig, printJson, table } from "../context.js";
import { nestedConfigOption } from "../options.js";

/**
 * `IDEM_FAULT=journal-copy.after-batch[:N]` (or `.before-commit`) SIGKILLs this process at the
 * Nth hit of that point, as the executor and interpreter do at theirs (any other known point
 * never fires in a copy; an unknown one is a usage error).
 */
export function copyFault(spec: string | undefined): (point: JournalCopyFaultPoint) => void {
  try {
    return createFaultHook(spec, () => process.kill(process.pid, "SIGKILL"));
  } catch (e) {
    throw new CliError((e as Error).message, EXIT.USAGE);
  }
}

/** The --to URL, checked: a postgres:// or postgresql:// URL (its password is never echoed). */
function targetUrl(value: string): string {
  let protocol: string;
  try {
    protocol = new URL(value).protocol;
  } catch {
    throw new CliError(
      "--to: not a URL; expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
      EXIT.USAGE,
    );
  }
  if (protocol !== "postgres:" && protocol !== "postgresql:") {
    throw new CliError(`--to: ${redactUrl(value)} is not a postgres:// URL`, EXIT.USAGE);
  }
  return value;
}

function batchOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100_000) {
    throw new CliError(
      `--batch: "${value}" is not a whole number of rows from 1 to 100000`,
      EXIT.USAGE,
    );
  }
  return n;
}

/** A bar per table and phase on a terminal; a line per table copied otherwise (none with --json). */
function progressReporter(json: boolean): {
  report: (p: JournalCopyProgress) => void;
  stop(): void;
} {
  if (process.stderr.isTTY && !json) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: "{phase} {table} [{bar}] {value}/{total} rows",
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    let current = "";
    return {
      report(p) {
        const name = `${p.phase} ${p.table}`;
        if (name !== current) {
          if (current !== "") bar.stop();
          current = name;
          bar.start(p.total, p.done, { phase: p.phase, table: p.table.padEnd(14) });
        } else bar.update(p.done);
      },
      stop: () => bar.stop(),
    };
  }
  return {
    report(p) {
      if (!json && p.phase === "copy" && p.done === p.total) {
        process.stderr.write(`copied ${p.table}: ${p.total} rows\n`);
      }
    },
    stop() {},
  };
}

function printReport(r: JournalCopyReport): void {
  process.stdout.write(
    `${table(
      ["table", "source rows", "target rows", "inserted now", "sha256 (source)", "equal"],
      r.tables.map((t) => [
        t.table,
        t.source.rows,
        t.target.rows,
        t.inserted,
        t.source.sha256.slice(0, 16),
        t.equal ? "yes" : `NO (target ${t.target.sha256.slice(0, 16)})`,
      ]),
    )}\n`,
  );
  if (r.verified) {
    process.stdout.write(
      `copied ${r.from}\n    to ${r.to}: every table's count and content hash equal.\n` +
        "next: set journal.url (or IDEM_JOURNAL_URL) to that URL in the config and start idem again\n",
    );
  } else {
    const bad = r.tables.filter((t) => !t.equal).map((t) => t.table);
    process.stdout.write(
      `verification failed: ${bad.join(", ")} differ between ${r.from} and ${r.to}.\n` +
        "Something wrote the SQLite journal during the copy: stop every idem process using it and run the copy again\n",
    );
  }
}

/** `idem journal copy`, imported when it runs (its options and help: commands/journal.ts). */
export async function runJournalCopy(
  opts: { to: string; from?: string; batch?: string; json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const to = targetUrl(opts.to);
  const batchSize = batchOption(opts.batch);
  const from =
    opts.from !== undefined
      ? resolve(opts.from)
      : loadConfig({ config: nestedConfigOption(cmd, opts) }).journal.path;
  const progress = progressReporter(opts.json ?? false);
  let report: JournalCopyReport;
  try {
    report = await copyJournal({
      from,
      to,
      batchSize,
      onProgress: progress.report,
      fault: copyFault(process.env.IDEM_FAULT),
    });
  } catch (e) {
    throw refusal(e, to);
  } finally {
    progress.stop();
  }
  if (opts.json) printJson(report);
  else printReport(report);
  if (!report.verified) exitHolder.code = EXIT.FAILED;
}

/** A failed or refused copy as exit 1, its message without the URL's password. */
function refusal(e: unknown, url: string): CliError {
  const message = e instanceof Error ? e.message : String(e);
  let password = "";
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // targetUrl parsed it already
  }
  const safe = redactSecret(message, password);
  return new CliError(
    `journal copy: ${safe}`,
    EXIT.FAILED,
    isIdemError(e) ? { code: e.code } : undefined,
  );
}
