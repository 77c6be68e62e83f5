import { fail, IdemError, redactSent, retryAfterMs } from "@idem/kit";

/** An answer of the GitHub REST API: its status, headers and JSON body (undefined when none). */
export interface GitHubAnswer {
  status: number;
  headers: Headers;
  body: unknown;
  /** The credentials the request carried (the token, an App's JWT): the answer may echo them. */
  sent?: readonly (string | undefined)[];
}

/**
 * GitHub's tokens by their documented shapes (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
 * `github_pat_`) and a JWT (an App's): taken out of what GitHub says even when this request did
 * not send them (a token of another request, quoted back).
 */
const TOKEN_SHAPES =
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+)/g;

/** How long to wait on a secondary rate limit that names no wait: GitHub says at least a minute. */
const SECONDARY_WAIT_MS = 60_000;

/**
 * GitHub's `message` (and the first entries of a 422's `errors`) as text fit for an error: at most
 * 300 characters, control characters replaced, every credential in `sent` (and any string shaped
 * as a GitHub token) taken out. Bytes from the target are hostile; this text is only ever shown,
 * never parsed. Pure.
 */
export function githubMessage(body: unknown, sent: GitHubAnswer["sent"] = []): string {
  // Redacted whole, then cut: a cut first could leave a token's head.
  return redactSent(rawMessage(body), sent).replace(TOKEN_SHAPES, "***").slice(0, 300);
}

/** GitHub's words as it said them: never shown before `githubMessage` took credentials out. */
function rawMessage(body: unknown): string {
  if (typeof body !== "object" || body === null) return "";
  const b = body as { message?: unknown; errors?: unknown };
  const parts = typeof b.message === "string" ? [b.message] : [];
  if (Array.isArray(b.errors)) {
    for (const e of b.errors.slice(0, 3)) {
      if (typeof e === "string") parts.push(e);
      else if (typeof e === "object" && e !== null) {
        const x = e as { message?: unknown; field?: unknown; code?: unknown };
        const text = [x.field, x.code, x.message].filter((v) => typeof v === "string").join(" ");
        if (text) parts.push(text);
      }
    }
  }
  return parts.join("; ").replace(/[\x00-\x1f\x7f]+/g, " ");
}

/** Whether an answer is a rate limit (primary: quota used up; secondary: `retry-after` or said so). */
export function isRateLimited(a: GitHubAnswer): boolean {
  if (a.status === 429) return true;
  if (a.status !== 403) return false;
  return (
    a.headers.get("retry-after") !== null ||
    a.headers.get("x-ratelimit-remaining") === "0" ||
    /rate limit/i.test(githubMessage(a.body))
  );
}

/**
 * How long a rate-limited answer asks to wait: `retry-after`, else until `x-ratelimit-reset`, else
 * a minute (GitHub: "wait for at least one minute before retrying"); never less than a second.
 */
export function rateLimitedWait(a: GitHubAnswer, now: number): number {
  return Math.max(1000, retryAfterMs(a.headers, now) ?? SECONDARY_WAIT_MS);
}

/**
 * The failure an answer other than the one expected stands for (docs/kinds/github.md, "Failures"):
 * - a rate limit (429, or 403 with `retry-after`, `x-ratelimit-remaining: 0` or saying so) is
 *   transient and waits what GitHub says (`retry-after`, else until `x-ratelimit-reset`, else a
 *   minute for a secondary limit);
 * - 401 (the token) and 403 (its permissions), 410 (a feature turned off) are the config's:
 *   INVALID_CONFIG, never retried;
 * - 404 is TARGET_MISSING (the repository is gone, or the token cannot see it);
 * - a redirect (a renamed or transferred repository; never followed, the token stays here) is the
 *   config's too;
 * - 409 is TARGET_CONFLICT; 400 and 422 INVALID_INPUT (callers map the 422s they expect first);
 * - 5xx, 408 and anything else is transient: GitHub may answer 502 after it performed a create,
 *   so a transient failure of a create is followed by a probe, never by a blind repeat.
 * `what` says what was asked (`create a pull request on acme/app`). Never names the token, even
 * when GitHub's answer repeats it (`githubMessage`).
 */
export function githubFailure(a: GitHubAnswer, what: string, now: number): IdemError {
  const said = githubMessage(a.body, a.sent);
  const text = `${what}: GitHub answered ${a.status}${said ? ` (${said})` : ""}`;
  const details = { status: a.status };
  if (isRateLimited(a)) {
    return fail.transient(`${text}; rate limited past rateLimitWaitMs`, {
      retryAfterMs: rateLimitedWait(a, now),
      details,
    });
  }
  switch (a.status) {
    case 401:
      return new IdemError(
        "INVALID_CONFIG",
        `${text}: the token is refused, even read (or minted) again: set a valid one in the variable tokenEnv names, or check github.app`,
        { details },
      );
    case 403:
    case 410:
      return new IdemError(
        "INVALID_CONFIG",
        `${text}: the token or the repository does not allow it`,
        {
          details,
        },
      );
    case 404:
      return new IdemError("TARGET_MISSING", `${text}: not found, or the token cannot see it`, {
        details,
      });
    case 409:
      return new IdemError("TARGET_CONFLICT", text, { details });
    case 301:
    case 302:
    case 307:
    case 308:
      return new IdemError(
        "INVALID_CONFIG",
        `${text}: the repository moved (renamed or transferred); name its new place in the options`,
        { details },
      );
    case 400:
    case 422:
      return new IdemError("INVALID_INPUT", text, { details });
    default:
      return fail.transient(text, { details });
  }
}

function causeCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 4 && typeof cur === "object" && cur !== null; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string") return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * A request that got no answer (refused, reset, timed out, dropped mid-answer): always transient.
 * For a create (`mayHavePerformed`), GitHub may have performed it before the connection went: the
 * next attempt probes first, and the probe finds it by its key marker, so this is never an
 * unknown outcome. The cause is kept (no credential is in it: the token is only ever a header).
 */
export function networkFailure(
  e: unknown,
  what: string,
  o: { timedOut: boolean; mayHavePerformed: boolean; timeoutMs: number },
): IdemError {
  const how = o.timedOut
    ? `timed out after ${o.timeoutMs} ms`
    : `failed before an answer (${causeCode(e) ?? "network error"})`;
  const after = o.mayHavePerformed
    ? "; GitHub may have performed it: the next attempt probes for it before it creates again"
    : "";
  return fail.transient(`${what}: ${how}${after}`, { cause: e });
}
