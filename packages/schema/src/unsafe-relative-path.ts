/** How many layers of percent-encoding a path is decoded through before it is refused. */
const MAX_DECODES = 4;

/**
 * Why an `http.request` path would leave its target's base URL, or undefined.
 *
 * Refused: a path not starting with `/`, `//`, whitespace, backslashes, NUL, absolute URLs, dot
 * segments (`/..`, `/.`) also with path parameters that servers strip (`/..;x/`), and in the path
 * any percent-encoded `.`, `/`, `\` or NUL, at any depth of encoding (`%2e`, `%252e`,
 * `%25%32%65`): a server or proxy that decodes once more would find a dot segment that the
 * target's base does not contain. Never throws.
 */
export function unsafeUrlPath(p: string): string | undefined {
  if (p !== "" && !p.startsWith("/")) return "must start with /";
  if (p.startsWith("//")) return "may not start with //";
  if (/[\s\\\0]/.test(p)) return "may not contain whitespace or backslashes";
  if (/%2e/i.test(p) || /%2f/i.test(p)) return "may not contain dot segments";
  if (/^[a-z][a-z0-9+.-]*:/i.test(p)) return "may not be an absolute URL";
  let path = /^[^?#]*/.exec(p)?.[0] ?? "";
  for (let depth = 0; ; depth++) {
    if (path.split("/").some((s) => /^\.\.?(;.*)?$/.test(s)))
      return depth === 0
        ? "may not contain dot segments"
        : "may not contain dot segments once percent-decoded";
    if (/%(2e|2f|5c|00)/i.test(path) || (depth > 0 && /[\\\0]/.test(path)))
      return "may not percent-encode '.', '/', '\\' or NUL at any depth";
    const decoded = path.replace(/%([0-9a-f]{2})/gi, (_, h: string) =>
      String.fromCharCode(Number.parseInt(h, 16)),
    );
    if (decoded === path) return undefined;
    if (depth + 1 >= MAX_DECODES) return `is percent-encoded more than ${MAX_DECODES} times`;
    path = decoded;
  }
}
