/**
 * The `next` URL of an RFC 8288 `Link` header as GitHub writes it
 * (`<https://api.github.com/repositories/1/pulls?page=2>; rel="next", <...>; rel="last"`), or
 * undefined. A `rel` may list several relation types (`rel="next last"`); parameters other than
 * `rel` are ignored. Pure; never throws on any input (a malformed header has no next page).
 */
export function nextLink(header: string | null | undefined): string | undefined {
  if (typeof header !== "string" || header.length > 16_384) return undefined;
  const entry =
    /<([^<>]*)>((?:\s*;\s*[A-Za-z0-9*!#$%&'+.^_`|~-]+\s*(?:=\s*(?:"[^"]*"|[^;,\s]*))?)*)/g;
  for (const m of header.matchAll(entry)) {
    const params = m[2] ?? "";
    for (const p of params.matchAll(/;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]*))/gi)) {
      const rels = (p[1] ?? p[2] ?? "").toLowerCase().split(/\s+/);
      if (rels.includes("next")) return m[1];
    }
  }
  return undefined;
}
