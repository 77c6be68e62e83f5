import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { beforeFirstKindImport } from "@idem/core/kind-imports";
import { parseIdemConfig } from "@idem/core/validate";
import { type JournalStore, openJournalStore } from "@idem/journal";
import {
  type Config,
  describeJsonError,
  exitCodeOfError,
  journalLocationOf,
  redactUrl,
} from "@idem/schema";
import type CliTable from "cli-table3";
import pc from "picocolors";
import { CliError, EXIT } from "./exit.js";
import { registerKindImportHooks } from "./kind-imports/provide-kind-imports.js";
import { cellWidth, columnFloor, fitColumns, tableWidth, wrapText } from "./render/fit-table.js";
import { jsonText, StyledCell, terminalText } from "./render/terminal-text.js";

export { CliError, EXIT, exitHolder } from "./exit.js";

// Every command that can load a kind module imports this module: the kind modules' resolution
// hooks are registered right before the first one is imported, never by a command that loads none.
beforeFirstKindImport(registerKindImportHooks);

/** The config file looked for in the working directory when neither --config nor IDEM_CONFIG names one. */
export const CONFIG_FILE = "idem.config.json";

/**
 * The exit code of a failure: a CliError's own, an IdemError's from the one table of codes
 * (`ERROR_CODES` of @idem/schema: INVALID_CONFIG 2, INVARIANT_VIOLATION and INTEGRITY 3, the
 * rest 1), otherwise 1.
 */
export function exitCodeOf(e: unknown): number {
  if (e instanceof CliError) return e.exitCode;
  return exitCodeOfError(e);
}

/** The options every command takes. */
export interface GlobalOptions {
  config?: string;
  json?: boolean;
}

/** Where the config is: --config, then IDEM_CONFIG, then ./idem.config.json. */
export function configPath(options: GlobalOptions): string {
  return resolve(options.config ?? process.env.IDEM_CONFIG ?? CONFIG_FILE);
}

/**
 * Loads and validates the config of a command that needs a journal. No config at all (no
 * `--config`, no `IDEM_CONFIG`, no ./idem.config.json) exits 2 saying where it looked and to run
 * `idem init`, before anything is created: a journal is never made silently in whatever directory
 * a command runs in. A missing explicit config, bad JSON or an invalid key (of idem's own
 * sections, or of a section an effect kind owns) exits 2 naming it.
 */
export function loadConfig(options: GlobalOptions): Config {
  const file = configPath(options);
  const explicit = options.config !== undefined || process.env.IDEM_CONFIG !== undefined;
  if (!existsSync(file)) {
    if (explicit) throw new CliError(`config ${file} does not exist`, EXIT.USAGE);
    throw new CliError(
      `no config: looked for --config, $IDEM_CONFIG and ${file}; nothing created.\n` +
        "  To start here: idem init (writes idem.config.json and an empty journal), or pass --config FILE",
      EXIT.USAGE,
    );
  }
  const raw = parseJsonText(readText(file, "config"), file, EXIT.USAGE);
  const r = parseIdemConfig(raw, {
    dir: dirname(file),
    file,
    natsUrl: process.env.NATS_URL,
    journalUrl: process.env.IDEM_JOURNAL_URL,
  });
  if (!r.ok) {
    const lines = r.issues.map((i) => `  ${i.path || "(root)"}: ${i.message}`).join("\n");
    throw new CliError(`invalid config ${file}:\n${lines}`, EXIT.USAGE, r.issues);
  }
  return r.config;
}

/**
 * Where the config's journal is, for messages: the SQLite file, or the PostgreSQL URL without its
 * password (`journal.url`, or `IDEM_JOURNAL_URL`, wins over `journal.path`).
 */
export function journalLocation(config: Config): string {
  const at = journalLocationOf(config);
  return "url" in at ? redactUrl(at.url) : at.path;
}

/** Whether the config's journal is a PostgreSQL database (`journal.url` or `IDEM_JOURNAL_URL`). */
export const onPostgres = (config: Config): boolean => "url" in journalLocationOf(config);

/**
 * Opens the config's journal with the adapter it names, applying pending migrations, and never
 * creates it: only `idem init` does (issue 42). A missing SQLite file, or a PostgreSQL database
 * without the journal's tables, is INTEGRITY (exit 3) naming where and docs/runbook.md "A lost
 * journal", and nothing is created (not even `.idem/`).
 */
export async function openConfiguredJournal(config: Config): Promise<JournalStore> {
  return openJournalStore(journalLocationOf(config), {
    synchronous: config.journal.synchronous,
    create: false,
  });
}

/** Runs `fn` with the journal open and closes it afterwards. */
export async function withJournal<T>(
  config: Config,
  fn: (journal: JournalStore) => Promise<T>,
): Promise<T> {
  const journal = await openConfiguredJournal(config);
  try {
    return await fn(journal);
  } finally {
    await journal.close();
  }
}

/** Reads a file (or stdin for `-`) as UTF-8, refusing invalid UTF-8. */
export function readText(file: string, what: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file === "-" ? 0 : file);
  } catch (e) {
    const code = (e as { code?: string }).code ?? "";
    throw new CliError(`cannot read ${what} ${file}: ${code || (e as Error).message}`, EXIT.FAILED);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(`${what} ${file} is not valid UTF-8`, EXIT.FAILED);
  }
}

/** Parses JSON, naming the line and column of a syntax error. */
export function parseJsonText(text: string, file: string, exitCode: number = EXIT.FAILED): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CliError(`${file} is not valid JSON ${describeJsonError(text, e)}`, exitCode);
  }
}

/** Whether colour is wanted: only on a TTY and without NO_COLOR. */
export const useColor = (): boolean => Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
export const color = pc.createColors(useColor());

// cli-table3 (CommonJS) is required on the first table: a command printing JSON never loads it.
const requireCjs = createRequire(import.meta.url);

/**
 * An aligned table for people, fitted to the terminal's width (`tableWidth`: 120 columns when
 * stdout is no terminal; unbounded with `--wide`): the widest columns are narrowed and their text
 * wrapped in the cell, never cut. Rows are separated by a line only when one of them takes more
 * than one. Every cell's text is made safe for a terminal (`terminalText`: control characters
 * escaped, URLs' credentials redacted), except a `StyledCell`, already made safe and coloured.
 */
export function table(
  head: string[],
  rows: (string | number | null | undefined | StyledCell)[][],
): string {
  const Table = requireCjs("cli-table3") as typeof CliTable;
  // A styled cell is short (a state, a verdict) and coloured: never wrapped.
  const cells = rows.map((r) =>
    r.map((c) =>
      c instanceof StyledCell
        ? c
        : new PlainCell(c === null || c === undefined ? "" : terminalText(String(c))),
    ),
  );
  const natural = head.map((h, i) =>
    cells.reduce((w, r) => Math.max(w, cellWidth(r[i]?.text ?? "")), cellWidth(h)),
  );
  const floors = head.map((h, i) =>
    columnFloor(
      h,
      cells.map((r) => r[i]?.text ?? ""),
    ),
  );
  const fitted = fitColumns(natural, floors, tableWidth());
  const tall = fitted
    ? natural.some((w, i) => w > (fitted[i] ?? w))
    : cells.some((r) => r.some((c) => c.text.includes("\n")));
  const t = new Table({
    head: head.map((h) => color.bold(h)),
    style: { head: [], border: [] },
    ...(fitted && { colWidths: fitted.map((w) => w + 2) }),
    chars: tall ? {} : { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
  // Wrapped here, at words and then at the punctuation of IDs and paths, rather than by
  // cli-table3, which breaks a line at its width wherever that falls.
  for (const r of cells)
    t.push(
      r.map((c, i) =>
        fitted && c instanceof PlainCell ? wrapText(c.text, fitted[i] ?? 0) : c.text,
      ),
    );
  return t.toString();
}

/** A cell's text made safe (`terminalText`), not styled: wrapped when its column is narrowed. */
class PlainCell {
  constructor(readonly text: string) {}
}

/** The first `max` lines, indented, and a count of the rest: long lists of problems stay readable. */
export function capped(lines: readonly string[], max = 20): string[] {
  const out = lines.slice(0, max).map((l) => `  ${l}`);
  if (lines.length > max) out.push(`  ... and ${lines.length - max} more`);
  return out;
}

/**
 * Prints a value as indented JSON on stdout (the `--json` output of every command): every control
 * character a JSON escape (`jsonText`), none raw.
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${jsonText(value)}\n`);
}

/** A time in ms as ISO-8601 to the second (empty for none). */
export function formatTime(ms: number | null | undefined): string {
  return ms === null || ms === undefined
    ? ""
    : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The actor recorded with a human's decision: --actor, then $USER. */
export function actorOf(option?: string): string {
  return option ?? process.env.IDEM_ACTOR ?? process.env.USER ?? "cli";
}

/**
 * `loadConfig`, then the effect kinds the config adds (`kinds.<name>`), loaded once for the
 * process: what every command that checks, records, probes or applies effects needs.
 * @throws CliError exit 2 as `loadConfig`; IdemError INVALID_CONFIG naming `kinds.<name>`.
 */
export async function loadConfigWithKinds(options: GlobalOptions): Promise<Config> {
  const config = loadConfig(options);
  const { loadKinds } = await import("@idem/core/validate");
  await loadKinds(config);
  return config;
}
