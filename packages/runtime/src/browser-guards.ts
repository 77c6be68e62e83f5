import { IdemError } from "@idem/schema";

// What the executor's API and the console refuse of a browser's request, in one place
// (docs/security.md, "A hostile page in the operator's browser").

/** `127.0.0.0/8` written as a dotted quad. */
const LOOPBACK_V4 = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * Whether `host` (a listen address, or the name of a Host header) is loopback: `localhost` and
 * `*.localhost` (RFC 6761: they never leave the host), `127.0.0.0/8`, `::1`. Case-insensitive; a
 * trailing dot and IPv6 brackets are allowed. Never throws.
 */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const m = LOOPBACK_V4.exec(h);
  return m?.slice(1).every((n) => Number(n) <= 255) ?? false;
}

/** The host name of a Host header value: `[::1]:7070` is `::1`, `localhost:7070` is `localhost`. */
function hostName(header: string): string {
  const h = header.trim();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end < 0 ? h : h.slice(1, end);
  }
  const colon = h.lastIndexOf(":");
  return colon < 0 ? h : h.slice(0, colon);
}

/**
 * Why a server listening on loopback refuses a request's `Host`, or undefined when it may go on.
 * A page that rebinds its own DNS name to 127.0.0.1 (DNS rebinding) reaches the server with its
 * name in `Host`; a loopback server only ever has loopback names (localhost, 127.0.0.1, [::1]).
 * A request without Host (HTTP/1.0, a test harness) is no browser's, and goes on. Never throws.
 */
export function hostRefusal(host: string | undefined): string | undefined {
  if (host === undefined || host === "") return undefined;
  if (isLoopbackHost(hostName(host))) return undefined;
  return `this server listens on loopback and answers only loopback host names (localhost, 127.0.0.1, [::1]); Host ${JSON.stringify(host.slice(0, 100))} refused`;
}

/** The headers a cross-origin check reads. */
export interface CrossOriginHeaders {
  secFetchSite?: string | undefined;
  origin?: string | undefined;
  host?: string | undefined;
}

/**
 * Why a request is a browser's cross-origin request, or undefined when it is not. As Go's
 * `http.CrossOriginProtection` decides: `Sec-Fetch-Site` (every current browser sends it) other
 * than `same-origin` or `none` (the person typed the URL) is cross-origin; without it, an `Origin`
 * whose host differs from `Host`, or `Origin: null` (a sandboxed frame, a file), is. A request with
 * neither header is not a browser's (curl, an agent, a client library) and goes on. Never throws.
 */
export function crossOriginRefusal(h: CrossOriginHeaders): string | undefined {
  const site = h.secFetchSite?.trim().toLowerCase();
  if (site !== undefined && site !== "") {
    return site === "same-origin" || site === "none"
      ? undefined
      : `cross-site request refused (Sec-Fetch-Site: ${site.slice(0, 40)})`;
  }
  const origin = h.origin?.trim();
  if (origin === undefined || origin === "") return undefined;
  if (origin === "null") return "cross-site request refused (Origin: null)";
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    originHost = undefined;
  }
  if (originHost !== undefined && originHost === h.host?.trim().toLowerCase()) return undefined;
  return `cross-site request refused (Origin: ${origin.slice(0, 100)})`;
}

/**
 * Refuses to serve `what` (the API, the console) beyond loopback without a token: anyone who
 * reaches the address could then record outputs or act on the journal.
 * @throws INVALID_CONFIG naming the setting, the option and the way out.
 */
export function assertListenAllowed(options: {
  what: string;
  host: string;
  token: string | null;
  hostKey: string;
}): void {
  if (options.token !== null || isLoopbackHost(options.host)) return;
  throw new IdemError(
    "INVALID_CONFIG",
    `${options.what} would listen on ${options.host} (${options.hostKey} or --host), beyond loopback, without api.token: anyone who reaches it could act on the journal. Set api.token (idem init writes one), or listen on 127.0.0.1 (docs/security.md)`,
    { details: { field: "api.token" } },
  );
}
