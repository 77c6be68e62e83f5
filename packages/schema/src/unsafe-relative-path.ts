/**
 * Why a path relative to a repo or root is unsafe, or undefined when it is fine.
 *
 * Refused: NUL, absolute paths (also `C:`), backslashes, `..`, `.git` in any case, empty or `.`
 * segments and a leading `-`. A static check of the text only; the effects check the file system
 * (symlinks) again before writing. Never throws.
 */
export function unsafeRelativePath(p: string): string | undefined {
  if (p.includes("\0")) return "may not contain NUL";
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return "must be relative, not absolute";
  if (p.includes("\\")) return "may not contain a backslash";
  const parts = p.split("/");
  if (parts.some((s) => s === "..")) return "may not contain '..'";
  if (parts.some((s) => s.toLowerCase() === ".git")) return "may not touch .git";
  if (parts.some((s) => s === "" || s === ".")) return "may not contain empty or '.' segments";
  if (p.startsWith("-")) return "may not start with '-'";
  return undefined;
}

/**
 * Why an `http.request` path would leave its target's base URL, or undefined.
 *
 * Refused: a path not starting with `/`, `//`, whitespace, backslashes, NUL, dot segments (also
 * percent-encoded `.` or `/`) and absolute URLs. Never throws.
 */
export function unsafeUrlPath(p: string): string | undefined {
  if (p !== "" && !p.startsWith("/")) return "must start with /";
  if (p.startsWith("//")) return "may not start with //";
  if (/[\s\\\0]/.test(p)) return "may not contain whitespace or backslashes";
  if (/^[^?#]*(^|\/)\.\.?(\/|$|\?|#)/.test(p) || /%2e/i.test(p) || /%2f/i.test(p))
    return "may not contain dot segments";
  if (/^[a-z][a-z0-9+.-]*:/i.test(p)) return "may not be an absolute URL";
  return undefined;
}
