import {
  aliasOf,
  IdemError,
  type ProbeResult,
  readTextPrefix,
  redactSent,
  unsafeUrlPath,
} from "@idem/kit";
import { checkHeaders, checkKey, refuse } from "../../sandbox.js";
import { keyFieldProblem, lookupResult, readLookup, withKeyField } from "./http-lookup.js";
import type { HttpSection, HttpTarget } from "./http-targets.js";
import type { HttpRequestSpec } from "./spec.js";

/** The probe and apply of http.request over the configured targets: its resource. */
export interface HttpRequester {
  probe(spec: HttpRequestSpec, key: string): Promise<ProbeResult>;
  apply(spec: HttpRequestSpec, key: string, probed?: ProbeResult): Promise<Record<string, unknown>>;
}

/**
 * Whether a request creates, and so carries the key where a target's lookup finds it: a POST. The
 * key is written on no other method (a PATCH or PUT carrying it would overwrite the external id
 * of the item it changes, and the create's probe would then answer absent), so a lookup probes
 * only a POST; any other request to the target is as on a target without one.
 */
export const createsWithKey = (spec: HttpRequestSpec): boolean => spec.method === "POST";

/**
 * What a target's lookup and headersEnv ask of a spec, checked before record and again at apply:
 * a create's body can carry the key at `keyField` (an object, no value there of the agent's own),
 * and no header of the agent's is one the config or the lookup sets.
 * @throws IdemError SANDBOX_VIOLATION naming `body` or `headers.<name>`.
 */
export function checkLookupSpec(spec: HttpRequestSpec, t: HttpTarget): void {
  const keyField = t.lookup?.keyField;
  if (keyField !== undefined && createsWithKey(spec)) {
    const why = keyFieldProblem(spec.body, keyField);
    if (why) refuse("body", why);
  }
  const own = [
    ...Object.keys(t.headersEnv ?? {}),
    ...(t.lookup?.keyHeader ? [t.lookup.keyHeader] : []),
  ].map((h) => h.toLowerCase());
  for (const name of Object.keys(spec.headers ?? {}))
    if (own.includes(name.toLowerCase()))
      refuse(`headers.${name}`, "is set by the target's config");
}

/**
 * The URL a request goes to: the target's baseUrl followed by `path`, which must stay under it
 * (same origin, same path prefix, no dot segments or encoded slashes).
 * @throws IdemError SANDBOX_VIOLATION
 */
export function requestUrl(target: HttpTarget, path: string): URL {
  if (typeof path !== "string") refuse("path", "must be a string");
  const why = unsafeUrlPath(path);
  if (why) refuse("path", `${JSON.stringify(path)} ${why}`);
  const base = new URL(target.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, "");
  const url = new URL(`${base.origin}${basePath}${path}`);
  if (url.origin !== base.origin)
    refuse("path", `${JSON.stringify(path)} leaves the target's origin`);
  if (
    url.pathname !== basePath &&
    !url.pathname.startsWith(`${basePath}/`) &&
    !(basePath === "" && url.pathname === "/")
  ) {
    refuse("path", `${JSON.stringify(path)} leaves the target's base path ${basePath}`);
  }
  if (url.username || url.password) refuse("path", "may not carry credentials");
  return url;
}

function causeCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur && typeof cur === "object"; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string") return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * Maps a failed fetch to an IdemError: never sent is transient; refused by fetch before sending (an
 * argument it cannot send) is a validation error; maybe sent is uncertain unless the target dedups.
 */
function fetchError(e: unknown, target: HttpTarget, url: URL, timedOut: boolean): IdemError {
  const code = causeCode(e);
  if (code === "UND_ERR_INVALID_ARG") return notSendable(e);
  if (code && NOT_SENT.has(code)) {
    return new IdemError(
      "UNAVAILABLE",
      `${url.origin} refused or is unreachable (${code}); nothing was sent`,
      { cause: e },
    );
  }
  if (target.idempotencyKeys) {
    return timedOut
      ? new IdemError("TIMEOUT", `${url.href} timed out after ${target.timeoutMs} ms`, { cause: e })
      : new IdemError("UNAVAILABLE", `${url.href} failed (${code ?? "network error"})`, {
          cause: e,
        });
  }
  return new IdemError(
    "OUTCOME_UNKNOWN",
    `${url.href} ${timedOut ? `timed out after ${target.timeoutMs} ms` : `failed (${code ?? "network error"})`} after the request may have been sent, and the target does not dedup by Idempotency-Key`,
    { cause: e, details: { url: url.href } },
  );
}

/** fetch refused the request before sending anything: the spec can never succeed. */
function notSendable(e: unknown): IdemError {
  const why = e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : "";
  return new IdemError("INVALID_INPUT", `fetch refused the request before sending it: ${why}`, {
    cause: e,
    details: { field: "headers" },
  });
}

/** The most of an answer's body kept in an effect's result (characters). */
const SHOWN_CHARS = 4096;
/** The most of an answer's body read (bytes): the rest is never read, whatever its size. */
const SHOWN_BYTES = 4 * SHOWN_CHARS;
/** The most of a failed answer's body kept in the error's details (characters). */
const ERROR_CHARS = 512;

/**
 * The start of an answer's body, streamed (at most SHOWN_BYTES read, the rest cancelled), with
 * every credential sent in the request taken out: the target may echo them.
 */
async function shownBody(res: Response, sent: readonly string[], chars: number): Promise<string> {
  const { text, truncated } = await readTextPrefix(res, SHOWN_BYTES);
  const clean = redactSent(text, sent);
  return truncated || clean.length > chars ? `${clean.slice(0, chars)}…` : clean;
}

/** The start of a failed answer's body for its error: the same, never failing. */
const errorBody = (res: Response, sent: readonly string[]): Promise<string> =>
  shownBody(res, sent, ERROR_CHARS).catch(() => "");

/** Maps a non-2xx response status; `body` is already bounded and redacted. */
function statusError(status: number, url: URL, body: string): IdemError {
  const details = { status, url: url.href, body };
  if (status === 429)
    return new IdemError("UNAVAILABLE", `${url.href} answered 429 (rate limited)`, { details });
  if (status === 409) {
    return new IdemError("TARGET_CONFLICT", `${url.href} answered 409`, {
      details,
      class: "transient",
    });
  }
  if (status >= 500)
    return new IdemError("UNAVAILABLE", `${url.href} answered ${status}`, { details });
  if (status >= 300 && status < 400) {
    return new IdemError(
      "TARGET_CONFLICT",
      `${url.href} answered a redirect (${status}); idem does not follow redirects`,
      {
        details,
        class: "logic",
      },
    );
  }
  return new IdemError("INVALID_INPUT", `${url.href} refused the request with ${status}`, {
    details,
  });
}

/**
 * The URL of a path template under the target with `{key}` replaced by the percent-encoded key:
 * the template is checked as `requestUrl` checks a path (with a plain placeholder), and the key's
 * `/` and `:` are encoded, so the key stays one path segment or query value (it is never `.` or
 * `..`: a job ID starts with a letter or digit).
 * @throws IdemError SANDBOX_VIOLATION as requestUrl.
 */
export function keyedUrl(target: HttpTarget, template: string, key: string): URL {
  checkKey(key);
  requestUrl(target, template.replaceAll("{key}", "k"));
  const base = new URL(target.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, "");
  const url = new URL(
    `${base.origin}${basePath}${template.replaceAll("{key}", encodeURIComponent(key))}`,
  );
  if (url.origin !== base.origin || (basePath !== "" && !url.pathname.startsWith(`${basePath}/`)))
    refuse("path", `${JSON.stringify(template)} leaves the target's base URL`);
  return url;
}

/**
 * The headers a target's config gives every request and probe (`headersEnv`: credentials), read
 * from the environment when they are sent.
 * @throws IdemError INVALID_CONFIG naming the variable (never its value) when it is unset.
 */
function configHeaders(
  target: HttpTarget,
  env: (variable: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, variable] of Object.entries(target.headersEnv ?? {})) out[name] = env(variable);
  return out;
}

const noEnv = (variable: string): string => {
  throw new IdemError("INVALID_CONFIG", `the environment variable ${variable} is not set`, {
    details: { variable },
  });
};

/** One request to `target`, never following a redirect, within the target's timeout. */
async function sendRequest(
  fetchImpl: typeof fetch,
  target: HttpTarget,
  url: URL,
  init: RequestInit,
): Promise<Response> {
  try {
    // What fetch checks before it sends (a header value it cannot make bytes of) fails here,
    // where nothing has left this process.
    new Headers(init.headers);
  } catch (e) {
    throw notSendable(e);
  }
  const signal = AbortSignal.timeout(target.timeoutMs);
  try {
    return await fetchImpl(url, { ...init, signal, redirect: "manual" });
  } catch (e) {
    throw fetchError(e, target, url, signal.aborted);
  }
}

/**
 * http.request: sends the request to a configured target with `Idempotency-Key: <key>`. A target
 * with `idempotencyKeys: true` absorbs repeats; without it, a timeout or a reset after sending is
 * OUTCOME_UNKNOWN (the interpreter makes it `uncertain` unless the target can be probed). Probeable
 * with `probeUrl` (GET with the same header and `{key}` in the URL replaced by the encoded key;
 * 200 present, 404 absent) or with a `lookup` (docs/kinds/http.md): the request carries the key
 * where the target keeps an external id, and a GET finds it there.
 */
export function createHttpRequestHandler(
  section: HttpSection,
  fetchImpl: typeof fetch,
  env: (variable: string) => string = noEnv,
): HttpRequester {
  const targetOf = (alias: string) => {
    const t = aliasOf(section.targets, alias);
    if (!t)
      throw new IdemError("UNKNOWN_ALIAS", `unknown http target "${alias}"`, {
        details: { field: "target" },
      });
    return t;
  };
  const send = (target: HttpTarget, url: URL, init: RequestInit) =>
    sendRequest(fetchImpl, target, url, init);
  // A probe never changes anything, so its failure after sending is only ever transient.
  const probeGet = (t: HttpTarget, url: URL, headers: Record<string, string>) =>
    send({ ...t, idempotencyKeys: true }, url, { method: "GET", headers });
  const probe = async (spec: HttpRequestSpec, key: string): Promise<ProbeResult> => {
    checkKey(key);
    const t = targetOf(spec.target);
    requestUrl(t, spec.path);
    if (t.lookup) {
      if (!createsWithKey(spec))
        throw new IdemError(
          "INVALID_STATE",
          `http target "${spec.target}" looks up creates (POST) only, not ${spec.method}`,
        );
      const url = keyedUrl(t, t.lookup.path, key);
      const headers = configHeaders(t, env);
      const res = await probeGet(t, url, headers);
      const read = await readLookup(res, t.lookup, spec.target);
      if (read === "not-found") return { status: "absent", detail: { lookup: "not-found" } };
      if (read === undefined)
        throw statusError(res.status, url, await errorBody(res, Object.values(headers)));
      return lookupResult(read.found, t.lookup, key, spec.target);
    }
    if (t.probeUrl === null)
      throw new IdemError("INVALID_STATE", `http target "${spec.target}" has no probeUrl`);
    const url = /^https?:\/\//.test(t.probeUrl)
      ? new URL(t.probeUrl.replaceAll("{key}", encodeURIComponent(key)))
      : keyedUrl(t, t.probeUrl, key);
    const headers = configHeaders(t, env);
    const res = await probeGet(t, url, { ...headers, "Idempotency-Key": key });
    if (res.status === 200 || res.status === 404) {
      await res.body?.cancel().catch(() => {});
      return res.status === 200
        ? { status: "present", detail: { status: 200 } }
        : { status: "absent", detail: { status: 404 } };
    }
    throw statusError(res.status, url, await errorBody(res, Object.values(headers)));
  };
  return {
    probe,
    async apply(spec, key, probed) {
      checkKey(key);
      const t = targetOf(spec.target);
      const url = requestUrl(t, spec.path);
      checkHeaders(spec.headers, false);
      const lookup = t.lookup && createsWithKey(spec) ? t.lookup : undefined;
      checkLookupSpec(spec, t);
      if (lookup) {
        // Without a probe of its own caller's, a target that can be asked is asked first.
        if (!probed) {
          const p = await probe(spec, key);
          if (p.status === "present") return p.detail;
        }
      }
      const headers: Record<string, string> = {
        ...spec.headers,
        ...configHeaders(t, env),
        ...(lookup?.keyHeader ? { [lookup.keyHeader]: key } : {}),
        "Idempotency-Key": key,
      };
      let body: string | undefined;
      const sent = lookup?.keyField ? withKeyField(spec.body, lookup.keyField, key) : spec.body;
      if (sent !== undefined && spec.method !== "GET") {
        body = JSON.stringify(sent);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type"))
          headers["Content-Type"] = "application/json";
      }
      const res = await send(t, url, { method: spec.method, headers, body });
      const credentials = Object.values(configHeaders(t, env));
      let text: string;
      try {
        text = await shownBody(res, credentials, res.ok ? SHOWN_CHARS : ERROR_CHARS);
      } catch (e) {
        if (res.ok) return { status: res.status, body: null };
        throw fetchError(e, t, url, false);
      }
      if (!res.ok) throw statusError(res.status, url, text);
      return { status: res.status, body: text };
    },
  };
}
