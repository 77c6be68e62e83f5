import { redactUrl } from "@idem/schema";

/**
 * What a terminal would act on instead of print: C0 controls and DEL (ESC starts CSI, OSC 52
 * clipboard writes, OSC 8 hidden links; CR overwrites a line), C1 controls (U+0080-U+009F: CSI and
 * OSC in their 8-bit form), the line and paragraph separators, and the bidirectional overrides and
 * isolates that reorder what is shown (Trojan Source, CVE-2021-42574).
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_LINES =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\t": "\\t", "\r": "\\r", "\u001b": "\\e" };

const escapeChar = (c: string): string => {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
};

/**
 * Text from an agent or a target (a summary, a path, an error, a reason) made safe to print on a
 * terminal: every control character shown as an escape (`\e[2J`, `\x07`, `\x9b`, `\u202e`) instead
 * of acted on, and every URL's credentials redacted. One line by default (newline and tab escaped
 * too: a table cell, a `key: value` line); `lines: true` keeps newline and tab, where the context
 * is a block of text. Never throws.
 */
export function terminalText(text: string, options: { lines?: boolean } = {}): string {
  return redactUrl(text).replace(options.lines ? UNSAFE_BUT_LINES : UNSAFE, escapeChar);
}

/**
 * JSON for `--json`: `JSON.stringify` escapes C0 controls already; this escapes DEL, C1 controls,
 * the line separators and the bidirectional controls too (`\u009b`), so no byte a terminal acts on
 * is ever printed raw. The same value once parsed. Never throws for what JSON.stringify takes.
 */
export function jsonText(value: unknown, indent = 2): string {
  return (JSON.stringify(value, null, indent) ?? "null").replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * A table cell already made safe and styled (coloured): `table` prints it as it is. Any other
 * cell's text is escaped with {@link terminalText}.
 */
export class StyledCell {
  constructor(readonly text: string) {}
}

/** A cell coloured by `style` (a picocolors function) after its text was made safe. */
export function styled(style: (s: string) => string, text: string): StyledCell {
  return new StyledCell(style(terminalText(text)));
}
