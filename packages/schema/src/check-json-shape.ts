import type { ValidationIssue } from "./records.js";

/** The deepest nesting accepted in a submission; deeper input is refused before zod recurses. */
export const MAX_JSON_DEPTH = 64;
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Checks the raw shape of submitted JSON before any schema runs, without recursion.
 *
 * Refused: nesting deeper than MAX_JSON_DEPTH, a string or key that is not well-formed Unicode (a
 * lone surrogate would be stored as U+FFFD, so two different outputs could share a content hash),
 * and prototype-polluting keys (zod would silently drop `__proto__`, recording something other than
 * what was sent).
 *
 * Returns the issues found (at most about 20, then it stops looking); never throws, whatever the
 * input, so a hostile submission costs one bounded walk.
 */
export function checkJsonShape(raw: unknown, maxDepth = MAX_JSON_DEPTH): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [
    { value: raw, path: "", depth: 0 },
  ];
  const join = (path: string, key: string | number) =>
    path === "" ? String(key) : `${path}.${key}`;
  while (stack.length > 0 && issues.length < 20) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === "string") {
      if (!isWellFormed(value))
        issues.push({ path, message: "is not well-formed Unicode (a lone surrogate)" });
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth >= maxDepth) {
      issues.push({ path, message: `nests deeper than ${maxDepth} levels` });
      continue;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        stack.push({ value: v, path: join(path, i), depth: depth + 1 });
      });
      continue;
    }
    for (const key of Object.keys(value)) {
      const at = join(path, key);
      if (FORBIDDEN_KEYS.has(key))
        issues.push({ path: at, message: `the key "${key}" is not allowed` });
      else if (!isWellFormed(key))
        issues.push({ path: at, message: "key is not well-formed Unicode" });
      else
        stack.push({ value: (value as Record<string, unknown>)[key], path: at, depth: depth + 1 });
    }
  }
  return issues;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function isWellFormed(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/**
 * Names where a JSON text is broken, for messages to the sender.
 *
 * "at line L, column C: <parser message>" when the parser's error gives a position, else its
 * message alone. Never throws.
 */
export function describeJsonError(text: string, error: unknown): string {
  const msg = error instanceof Error ? error.message : String(error);
  const pos = /position (\d+)/.exec(msg);
  if (!pos) return msg;
  const before = text.slice(0, Number(pos[1]));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return `at line ${line}, column ${column}: ${msg}`;
}
