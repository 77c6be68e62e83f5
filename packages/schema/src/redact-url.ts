/**
 * The one redaction of URLs that idem prints, stores or exports (docs/security.md, "Credentials").
 * Pure: no I/O.
 */

/** Characters that end a URL inside free text: space, quotes, angle brackets and the like. */
const END = "\\s\"'<>\\\\^`{|}";
/** `scheme://` followed by user info up to its last `@` before the host. */
const USER_INFO = new RegExp(`([A-Za-z][A-Za-z0-9+.-]*://)([^${END}/?#]*)@`, "g");
/** PostgreSQL's URLs (libpq): their user name is always a role name, never a secret. */
const POSTGRES = /^postgres(ql)?:\/\/$/i;

/** The user info a reader may see: a PostgreSQL role name; nothing of any other. */
function shownUserInfo(scheme: string, info: string): string {
  if (info === "***" || !POSTGRES.test(scheme)) return "***";
  const colon = info.indexOf(":");
  return colon < 0 ? info : `${info.slice(0, colon)}:***`;
}
/** A whole URL inside free text, to find its query. */
const URL_IN_TEXT = new RegExp(`[A-Za-z][A-Za-z0-9+.-]*://[^${END}]+`, "g");
/** One `name=value` of a query string whose value is not empty. */
const QUERY_VALUE = new RegExp(`([?&][^=&#${END}]+=)[^&#${END}]+`, "g");

/**
 * `text` with every credential a URL in it may carry replaced by `***`: the user info of every
 * `scheme://user:password@host` and `scheme://token@host` (a user name can be the secret:
 * GitHub's `https://<token>@github.com` and `https://<token>:x-oauth-basic@github.com`, NATS's
 * `nats://<token>@host`), except a PostgreSQL URL's role name (`postgres://idem:***@db/idem`: libpq
 * reads it as a role, never a secret, and "role idem does not exist" needs it), and the value of
 * every query parameter (`?api_key=***`, a presigned URL's signature, libpq's `?password=`), names
 * kept. Scheme, host, port, path and fragment are kept, so a reader still sees where it points.
 *
 * It takes a URL alone or free text holding any number of them (an error message of git, pg,
 * fetch or NATS; a log line, JSON included: it never removes a quote or a backslash, so JSON stays
 * JSON). Idempotent; never throws; anything that is not a URL comes back as it was.
 */
export function redactUrl(text: string): string {
  if (!text.includes("://")) return text;
  return text
    .replace(
      USER_INFO,
      (_m, scheme: string, info: string) => `${scheme}${shownUserInfo(scheme, info)}@`,
    )
    .replace(URL_IN_TEXT, (url) =>
      url.includes("?") ? url.replace(QUERY_VALUE, (_m, name: string) => `${name}***`) : url,
    );
}

/**
 * Whether a URL carries credentials in its user info (`user:password@`, `token@`). A value that is
 * not a URL has none. Never throws.
 */
export function urlHasCredentials(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== "" || u.password !== "";
  } catch {
    return false;
  }
}

/**
 * `text` with every occurrence of each secret replaced by `***`: a credential idem holds (a token,
 * a password, a header's value) that an error of a client, a tool or a server may repeat. Absent
 * and empty secrets are skipped; a longer secret is replaced before a shorter one it contains, so
 * no part of it is left. The one hand-made scrub beside `redactUrl` (which finds the credentials
 * inside URLs by their shape). Pure; never throws.
 */
export function redactSecret(
  text: string,
  secrets: string | undefined | readonly (string | undefined)[],
): string {
  const list = (typeof secrets === "string" || secrets === undefined ? [secrets] : secrets)
    .filter((s): s is string => typeof s === "string" && s !== "")
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const s of list) out = out.split(s).join("***");
  return out;
}
