import { IdemError, isIdemError, unsafeHttpHeaderValue } from "@idem/schema";

// The checks of git's text (paths, messages, ref names) are the git engine's; the kinds' folders
// find every check here.
export {
  checkGitFileContent,
  checkMessage,
  checkRelativePath,
  messageWithTrailer,
  refComponent,
  trailerKeys,
} from "@idem/git";
export { isGitAttributesPath } from "@idem/kit";

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

/** Linux's PATH_MAX: a longer path is ENAMETOOLONG for every call that takes it. */
const PATH_MAX = 4096;

/**
 * A relative path joined to its target's folder (`base`; skipped when undefined) must stay under
 * PATH_MAX, or every write to it fails with ENAMETOOLONG.
 * @throws IdemError SANDBOX_VIOLATION naming `field`
 */
export function checkFullPath(field: string, base: string | undefined, p: string): void {
  if (base !== undefined && Buffer.byteLength(base) + 1 + Buffer.byteLength(p) >= PATH_MAX)
    refuse(field, `is too long: under its target's folder it reaches PATH_MAX (${PATH_MAX} bytes)`);
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
 * no `Nats-*` for NATS), no CR, LF or NUL, at most 8 KiB each; for HTTP, values that fetch sends
 * byte for byte ({@link unsafeHttpHeaderValue}: nothing above U+00FF, no control characters, no
 * leading or trailing space).
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
    const why = nats ? undefined : unsafeHttpHeaderValue(value);
    if (why) refuse(`headers.${name}`, why);
  }
}

/**
 * Runs a kind's text check so that a refusal names `field` when it names none (a patch parser's
 * "corrupt patch at line 7" is about `patch`): what `check` reports is always a field's.
 * @throws the check's IdemError, with `details.field` set
 */
export function checkingField(field: string, check: () => void): void {
  try {
    check();
  } catch (e) {
    if (!isIdemError(e) || typeof e.details?.field === "string" || e.class !== "validation")
      throw e;
    throw new IdemError(e.code, e.message, {
      cause: e.cause,
      class: e.class,
      details: { ...e.details, field },
    });
  }
}
