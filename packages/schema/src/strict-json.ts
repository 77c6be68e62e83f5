import { describeJsonError } from "./check-json-shape.js";
import type { ValidationIssue } from "./records.js";

/** What {@link parseStrictJson} answers: the value, or why the text would not be kept as sent. */
export type StrictJson = { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] };

/** The largest integer a JSON number keeps exactly in JavaScript (2^53 - 1). */
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);
const MAX_ISSUES = 20;

/**
 * Parses submitted JSON, refusing what `JSON.parse` would silently change: bytes that are not
 * UTF-8 (decoded as U+FFFD, so two different bodies would read the same), an object with the
 * same key twice (the last one wins), an integer beyond ±(2^53 - 1) (it loses digits) and a
 * number beyond the range of a double (it becomes Infinity, stored as null). These are the rules
 * of I-JSON (RFC 7493) for UTF-8, names and numbers.
 *
 * `input` is the body's bytes (checked as UTF-8 with a fatal decoder; a leading BOM is dropped)
 * or text already decoded. Every issue names the field (`effects.0.path`), or the whole input
 * (path "") for bad UTF-8 and syntax errors (with line and column). Pure; never throws; one linear
 * pass after `JSON.parse`.
 */
export function parseStrictJson(input: string | Uint8Array): StrictJson {
  let text: string;
  if (typeof input === "string") text = input;
  else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(input);
    } catch {
      const at = firstBadUtf8(input);
      return fail("", `is not valid UTF-8 (at byte ${at}): send the text as UTF-8`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail("", `is not JSON ${describeJsonError(text, e)}`);
  }
  const issues = silentChanges(text);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value };
}

function fail(path: string, message: string): StrictJson {
  return { ok: false, issues: [{ path, message }] };
}

/** The offset of the first byte a lossy decode replaces. */
function firstBadUtf8(bytes: Uint8Array): number {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const again = Buffer.from(buf.toString("utf8"), "utf8");
  let i = 0;
  while (i < buf.length && buf[i] === again[i]) i++;
  // Back to the start of the sequence the replacement began with.
  while (i > 0 && ((buf[i] as number) & 0xc0) === 0x80) i--;
  return i;
}

type Frame =
  | { object: true; path: string; keys: Set<string>; key: string; expectKey: boolean }
  | { object: false; path: string; index: number };

const join = (path: string, key: string | number) => (path === "" ? `${key}` : `${path}.${key}`);
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

/**
 * Duplicate keys and numbers JavaScript cannot hold, in a text `JSON.parse` has accepted (so it is
 * well-formed: the scan only tracks where it is).
 */
function silentChanges(text: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: Frame[] = [];
  const here = (): string => {
    const top = stack[stack.length - 1];
    if (top === undefined) return "";
    return top.object ? join(top.path, top.key) : join(top.path, top.index);
  };
  let i = 0;
  while (i < text.length && issues.length < MAX_ISSUES) {
    const c = text[i] as string;
    const top = stack[stack.length - 1];
    if (c === "{") {
      stack.push({ object: true, path: here(), keys: new Set(), key: "", expectKey: true });
      i++;
    } else if (c === "[") {
      stack.push({ object: false, path: here(), index: 0 });
      i++;
    } else if (c === "}" || c === "]") {
      stack.pop();
      i++;
    } else if (c === ",") {
      if (top?.object) top.expectKey = true;
      else if (top) top.index++;
      i++;
    } else if (c === ":") {
      if (top?.object) top.expectKey = false;
      i++;
    } else if (c === '"') {
      const end = stringEnd(text, i);
      if (top?.object && top.expectKey) {
        const raw = text.slice(i, end + 1);
        const key = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (top.keys.has(key))
          issues.push({
            path: join(top.path, key),
            message: "appears twice in one object (JSON would keep only the last); send it once",
          });
        top.keys.add(key);
        top.key = key;
      }
      i = end + 1;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text) as RegExpExecArray;
      const token = m[0];
      const why = numberChange(token, m[1] === undefined && m[2] === undefined);
      if (why) issues.push({ path: here(), message: why });
      i += token.length;
    } else i++;
  }
  return issues;
}

/** The index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let j = start + 1;
  for (;;) {
    const q = text.indexOf('"', j);
    let backslashes = 0;
    for (let k = q - 1; text[k] === "\\"; k--) backslashes++;
    if (backslashes % 2 === 0) return q;
    j = q + 1;
  }
}

/** Why JavaScript would not keep this number token as written, or undefined. */
function numberChange(token: string, integer: boolean): string | undefined {
  if (integer) {
    const n = BigInt(token);
    if (n > MAX_EXACT || n < -MAX_EXACT)
      return `is the integer ${token}, beyond ±(2^53 - 1): it would lose digits; send it as a string`;
    return undefined;
  }
  if (!Number.isFinite(Number(token)))
    return `is the number ${token.length > 40 ? `${token.slice(0, 40)}…` : token}, beyond the range of a double; send it as a string`;
  return undefined;
}
