import { IdemError } from "@idem/schema";

/**
 * Who answers HTTP where the API could not listen: `idem-executor` (another executor's API: its
 * open `GET /v1/openapi.json` has idem's title), `idem` (another idem process: `GET /metrics` has
 * idem's metrics, e.g. an interpreter's metrics port), `other` (something else answers HTTP), or
 * `unknown` (no HTTP answer in time).
 */
export type PortHolder = "idem-executor" | "idem" | "other" | "unknown";

/** GETs `url` within `timeoutMs`: the body's first 64 KB, or undefined when nothing answered. */
async function peek(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    const text = await res.text();
    return text.slice(0, 64 * 1024);
  } catch {
    return undefined;
  }
}

/**
 * Asks what holds `host:port`. Reads only a title and metric names from what answers (its bytes are
 * untrusted: nothing of them is repeated). Never throws.
 */
export async function whoHoldsPort(
  host: string,
  port: number,
  timeoutMs = 1_000,
): Promise<PortHolder> {
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const openapi = await peek(`${base}/v1/openapi.json`, timeoutMs);
  if (openapi === undefined) return "unknown";
  try {
    const title = (JSON.parse(openapi) as { info?: { title?: unknown } }).info?.title;
    if (typeof title === "string" && /^idem executor\b/.test(title)) return "idem-executor";
  } catch {
    // not JSON: not an executor's API
  }
  const metrics = await peek(`${base}/metrics`, timeoutMs);
  return metrics !== undefined && /^idem_\w+/m.test(metrics) ? "idem" : "other";
}

const HELD_BY: Record<PortHolder, string> = {
  "idem-executor": "another idem executor serves its HTTP API there",
  idem: "another idem process serves there (its /metrics are idem's)",
  other: "another program answers HTTP there",
  unknown: "a program that does not answer HTTP holds the port",
};

/**
 * The error for an API that cannot listen because `host:port` is taken: UNAVAILABLE, naming the
 * holder when it can tell (`details.heldBy`) and the ways out (`--port`, `api.port`, `--no-api`).
 */
export async function portInUseError(
  host: string,
  port: number,
  cause: unknown,
): Promise<IdemError> {
  const heldBy = await whoHoldsPort(host, port);
  return new IdemError(
    "UNAVAILABLE",
    `the HTTP API cannot listen on ${host}:${port}: ${HELD_BY[heldBy]}. Stop it, give this ` +
      "executor another port (--port N, or api.port in the config; 0 picks a free one), " +
      "or run it without the API (--no-api)",
    { cause, details: { host, port, heldBy } },
  );
}
