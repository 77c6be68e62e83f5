// Tables that fit the terminal: the widths of the columns a table may take, given the terminal's
// width, as `gh` and `kubectl` size theirs. A table wider than the terminal gets its widest
// columns narrowed, their text wrapped inside the cell (never cut); `--wide` turns that off, for a
// wide terminal or a pipe into grep.

/** The width a table is fitted to when stdout is not a terminal and `COLUMNS` says nothing. */
export const DEFAULT_COLUMNS = 120;
/** No column of text is narrowed below this many characters (or its header, when wider). */
const MIN_COLUMN = 8;
/** A column of single words no wider than this (times, states, counts) is never narrowed. */
const WHOLE_WORDS_COLUMN = 20;

let wideTables = false;

/** `--wide`: tables at their natural width, with every column and full IDs (see `isWide`). */
export function setWide(wide: boolean): void {
  wideTables = wide;
}

/** Whether `--wide` was given: every column, owner IDs in full, long texts not shortened. */
export const isWide = (): boolean => wideTables;

/**
 * The width tables are fitted to: the terminal's when stdout is one, else `COLUMNS` when it is a
 * positive integer, else 120; unbounded with `--wide`.
 */
export function tableWidth(): number {
  if (wideTables) return Number.POSITIVE_INFINITY;
  if (process.stdout.isTTY && process.stdout.columns > 0) return process.stdout.columns;
  const columns = Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : DEFAULT_COLUMNS;
}

// SGR colour sequences of a styled cell: no width on a terminal.
const SGR = /\x1b\[[0-9;]*m/g;

/** The printed width of a cell's widest line (one column per code point; colours take none). */
export function cellWidth(text: string): number {
  let widest = 0;
  for (const line of text.replace(SGR, "").split("\n")) widest = Math.max(widest, [...line].length);
  return widest;
}

/**
 * The content width of each column (padding and borders excluded) so that a table of `natural`
 * column widths fits `width` characters, borders included (`│ a │ b │`: 3 per column and 1).
 * Each column gets its floor, then what is left is shared out by need: the columns needing less
 * than an equal share get all they need, the others an equal share ("water filling"). Undefined
 * when the table fits as it is.
 */
export function fitColumns(
  natural: readonly number[],
  floors: readonly number[],
  width: number,
): number[] | undefined {
  const room = width - (3 * natural.length + 1);
  if (natural.reduce((a, b) => a + b, 0) <= room) return undefined;
  const base = natural.map((w, i) => Math.min(w, floors[i] ?? MIN_COLUMN));
  const need = natural.map((w, i) => w - (base[i] as number));
  let left = room - base.reduce((a, b) => a + b, 0);
  const extra = need.map(() => 0);
  const order = need.map((n, i) => [n, i] as const).sort((a, b) => a[0] - b[0]);
  for (let k = 0; k < order.length; k++) {
    const [n, i] = order[k] as readonly [number, number];
    const share = Math.max(0, Math.floor(left / (order.length - k)));
    extra[i] = Math.min(n, share);
    left -= extra[i] as number;
  }
  return base.map((b, i) => b + (extra[i] as number));
}

/**
 * `text` broken into lines of at most `width` characters: at spaces where it can, a word longer
 * than a line after a `-`, `/`, `.`, `:`, `_` or `,` within it, else anywhere. A paragraph's
 * leading spaces are kept; its lines after the first start with `indent` (counted in the width).
 */
export function wrapText(text: string, width: number, indent = ""): string {
  if (!Number.isFinite(width)) return text;
  const len = (s: string) => [...s].length;
  const out: string[] = [];
  for (const paragraph of text.split("\n")) {
    const lead = /^ */.exec(paragraph)?.[0] ?? "";
    let line = lead;
    let first = true;
    const limit = () => Math.max(1, width - (first ? 0 : indent.length));
    const push = () => {
      out.push(first || line === "" ? line : `${indent}${line}`);
      first = false;
      line = "";
    };
    for (const word of paragraph.slice(lead.length).split(" ")) {
      const sep = line.trim() === "" ? "" : " ";
      if (len(line) + len(sep) + len(word) <= limit()) {
        line += sep + word;
        continue;
      }
      if (line.trim() !== "") push();
      let rest = [...word];
      while (len(line) + rest.length > limit()) {
        const max = Math.max(1, limit() - len(line));
        const head = rest.slice(0, max);
        const at = Math.max(...["-", "/", ".", ":", "_", ","].map((c) => head.lastIndexOf(c)));
        const cut = at >= max / 2 ? at + 1 : max;
        line += head.slice(0, cut).join("");
        push();
        rest = rest.slice(cut);
      }
      line += rest.join("");
    }
    push();
  }
  return out.join("\n");
}

/** A line of text for people, wrapped at the table width (`tableWidth`), continued with `indent`. */
export const textLine = (text: string, indent = "  "): string =>
  wrapText(text, tableWidth(), indent);

/**
 * The floor of a column: one of single words no wider than `WHOLE_WORDS_COLUMN` (a time, a state,
 * a count) keeps its width; any other keeps `MIN_COLUMN`, or its header's width when wider.
 */
export function columnFloor(header: string, cells: readonly string[]): number {
  const natural = Math.max(cellWidth(header), ...cells.map(cellWidth));
  const words = cells.every((c) => !/\s/.test(c.replace(SGR, "")));
  if (words && natural <= WHOLE_WORDS_COLUMN) return natural;
  return Math.max(MIN_COLUMN, cellWidth(header));
}

/** A long text for a compact cell: at most `max` characters, cut at a word with `…` (in full with `--wide`). */
export function clip(text: string, max: number): string {
  if (wideTables || text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * An owner ID as tables show it: `<host>:<pid>:<random>`, the part log lines and `ps` agree on,
 * without the boot ID, PID namespace and start time that make it checkable (`--json` and `--wide`
 * show those).
 */
export function shortOwner(owner: string | null | undefined): string {
  if (owner === null || owner === undefined) return "";
  if (wideTables) return owner;
  const at = owner.indexOf("@");
  return at > 0 ? owner.slice(0, at) : owner;
}
