import { EFFECT_TRAILER, IdemError, unsafeRelativePath } from "@idem/schema";

/** Throws SANDBOX_VIOLATION with the field it is about. */
export function refuse(field: string, why: string): never {
  throw new IdemError("SANDBOX_VIOLATION", `${field} ${why}`, { details: { field } });
}

/**
 * An effect key goes into commit trailers, ref names, headers and message ids, so it must be a
 * single printable token: `<jobId>/<index>` always is.
 */
export function checkKey(key: string): void {
  if (!/^[A-Za-z0-9._:/-]{1,256}$/.test(key) || key.startsWith("-")) {
    refuse("key", `${JSON.stringify(key)} is not an effect key`);
  }
}

/** Re-checks a relative path at the target (the stored spec may predate today's schema). */
export function checkRelativePath(field: string, p: string): void {
  const why = unsafeRelativePath(p);
  if (why) refuse(field, `"${p}" ${why}`);
  if (Buffer.byteLength(p) > 4096) refuse(field, "is too long");
  if (/[\n\r]/.test(p)) refuse(field, "may not contain a line break");
}

const TRAILER_LINE = new RegExp(`^\\s*${EFFECT_TRAILER}\\s*:`, "im");

/** A commit message that carries its own trailer could forge another effect's presence. */
export function checkMessage(message: string): void {
  if (message.trim().length === 0) refuse("message", "is empty");
  if (message.includes("\0")) refuse("message", "may not contain NUL");
  if (TRAILER_LINE.test(message))
    refuse("message", `may not contain an ${EFFECT_TRAILER}: line of its own`);
  if (Buffer.byteLength(message) > 65_536) refuse("message", "is longer than 64 KiB");
}

/** The message idem commits: the agent's text, a blank line, then the trailer as the last paragraph. */
export function messageWithTrailer(message: string, key: string): string {
  return `${message.replace(/\s+$/, "")}\n\n${EFFECT_TRAILER}: ${key}\n`;
}

/** Reads the effect keys from a commit message's `Idem-Effect:` lines. */
export function trailerKeys(message: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`^${EFFECT_TRAILER}: (\\S+)\\s*$`, "gm");
  for (const m of message.matchAll(re)) out.push(m[1] as string);
  return out;
}

/** Header names no agent may set (docs/agents.md, `nats.publish` and `http.request`), plus hop-by-hop and framing headers. */
const RESERVED_HEADERS = new Set([
  "idempotency-key",
  "nats-msg-id",
  "host",
  "authorization",
  "proxy-authorization",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
]);

/**
 * Checks user headers of an http.request or nats.publish: valid names, none reserved to idem (and
 * no `Nats-*` for NATS), no CR, LF or NUL, at most 8 KiB each.
 * @throws IdemError SANDBOX_VIOLATION naming the header.
 */
export function checkHeaders(headers: Record<string, string> | undefined, nats: boolean): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name))
      refuse(`headers.${name}`, "is not a valid header name");
    if (RESERVED_HEADERS.has(lower) || (nats && lower.startsWith("nats-"))) {
      refuse(`headers.${name}`, "is reserved to idem");
    }
    if (typeof value !== "string" || /[\r\n\0]/.test(value))
      refuse(`headers.${name}`, "may not contain CR, LF or NUL");
    if (value.length > 8192) refuse(`headers.${name}`, "is too long");
  }
}

/** Encodes an effect key or branch into one valid ref name component. */
export function refComponent(s: string): string {
  return [...Buffer.from(s, "utf8")]
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9_-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}
