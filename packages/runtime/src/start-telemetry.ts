import { type Config, describeError, redactSecret, redactUrl } from "@idem/schema";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Logger } from "./logger.js";
import { otelCore, otlpTraceExporterHttp } from "./opentelemetry.js";
import { createTracing, noopTracing, type Tracing } from "./tracing.js";

/** The environment variables telemetry reads (the OpenTelemetry standard names). */
export type TelemetryEnv = Readonly<Record<string, string | undefined>>;

/** Where traces go: the OTLP/HTTP traces URL, and which setting named it (for the log line). */
export interface OtlpTarget {
  url: string;
  from: "telemetry.otlpUrl" | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" | "OTEL_EXPORTER_OTLP_ENDPOINT";
}

const TRACES_PATH = "v1/traces";

/** A base URL (no path) plus `/v1/traces`; a URL with a path as it is. */
function tracesUrlOf(url: string): string {
  const u = new URL(url);
  if (u.pathname !== "/" && u.pathname !== "") return u.toString();
  u.pathname = `/${TRACES_PATH}`;
  return u.toString();
}

/** `base` plus `/v1/traces`, as the OpenTelemetry spec appends it to OTEL_EXPORTER_OTLP_ENDPOINT. */
function appendTracesPath(base: string): string {
  const u = new URL(base);
  u.pathname = `${u.pathname.replace(/\/+$/, "")}/${TRACES_PATH}`;
  return u.toString();
}

const isHttpUrl = (value: string): boolean => {
  try {
    const u = new URL(value);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
};

/**
 * Where this process exports traces, or undefined when telemetry is off (the default).
 * `telemetry.otlpUrl` first (a URL without a path is a base: `/v1/traces` is added); else
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is; else `OTEL_EXPORTER_OTLP_ENDPOINT` plus
 * `/v1/traces`. `OTEL_SDK_DISABLED=true` turns it off whatever is set. A variable that is not an
 * http(s) URL is ignored (named in `ignored`, its value never repeated). Pure.
 */
export function resolveOtlpTarget(
  config: Pick<Config, "telemetry">,
  env: TelemetryEnv,
): { target: OtlpTarget | undefined; ignored: string[] } {
  if ((env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true")
    return { target: undefined, ignored: [] };
  const configured = config.telemetry.otlpUrl;
  if (configured !== null)
    return { target: { url: tracesUrlOf(configured), from: "telemetry.otlpUrl" }, ignored: [] };
  const ignored: string[] = [];
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) {
    if (isHttpUrl(traces)) {
      return { target: { url: traces, from: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" }, ignored };
    }
    ignored.push("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  }
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) {
    if (isHttpUrl(base)) {
      return {
        target: { url: appendTracesPath(base), from: "OTEL_EXPORTER_OTLP_ENDPOINT" },
        ignored,
      };
    }
    ignored.push("OTEL_EXPORTER_OTLP_ENDPOINT");
  }
  return { target: undefined, ignored };
}

/** Removes what could be a secret from an exporter's error text: URL credentials, header values. */
function scrub(text: string, secrets: readonly string[]): string {
  // A value shorter than 4 characters is too common to hide everywhere it occurs.
  return redactSecret(
    redactUrl(text),
    secrets.filter((s) => s.length >= 4),
  );
}

/** Exports through `inner` and logs failed exports: the first, then at most one a minute. */
function reportingExporter(
  inner: SpanExporter,
  logger: Logger | undefined,
  secrets: readonly string[],
  endpoint: string,
): SpanExporter {
  const { ExportResultCode } = otelCore();
  let lastReport = Number.NEGATIVE_INFINITY;
  let failures = 0;
  return {
    export(spans, done) {
      inner.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) {
          failures += 1;
          const now = performance.now();
          if (logger && now - lastReport >= 60_000) {
            lastReport = now;
            logger.warn(
              {
                endpoint,
                failures,
                err: scrub(describeError(result.error ?? "export failed"), secrets),
              },
              "traces could not be exported (jobs are not affected)",
            );
          }
        }
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

/** How a process starts its telemetry. */
export interface StartTelemetryOptions {
  config: Pick<Config, "telemetry">;
  /** `service.name` when neither `telemetry.serviceName` nor `OTEL_SERVICE_NAME` names one. */
  service: string;
  /**
   * Where the URL, `OTEL_SERVICE_NAME` and `OTEL_SDK_DISABLED` are read; default `process.env`.
   * The exporter itself reads `OTEL_EXPORTER_OTLP_HEADERS` (and its other variables) from
   * `process.env`.
   */
  env?: TelemetryEnv;
  /** Told where traces go (the URL without credentials) and about failed exports. */
  logger?: Logger;
  /** The most `shutdown()` waits for the receiver; default 5 s. */
  shutdownTimeoutMs?: number;
}

/**
 * The tracing of one process (`idem executor`, `interpreter`, `replay`, `enqueue`): off, and free,
 * unless {@link resolveOtlpTarget} finds an OTLP/HTTP URL; then spans are batched and exported as
 * OTLP JSON, with `telemetry.headers` (and `OTEL_EXPORTER_OTLP_HEADERS`) on every request. Nothing
 * is registered globally. An export that fails is logged (never the headers or URL credentials)
 * and changes nothing for the jobs. Call `shutdown()` on stop so the last spans are sent.
 */
export function startTelemetry(options: StartTelemetryOptions): Tracing {
  const env = options.env ?? process.env;
  const { logger } = options;
  const { target, ignored } = resolveOtlpTarget(options.config, env);
  for (const name of ignored)
    logger?.warn({ variable: name }, `${name} is not an http(s) URL: no traces from it`);
  if (!target) return noopTracing;
  const headers = options.config.telemetry.headers;
  const endpoint = redactUrl(target.url);
  // Telemetry is on: only now is the OTLP exporter (and the SDK, by createTracing) loaded.
  const { OTLPTraceExporter } = otlpTraceExporterHttp();
  const exporter = new OTLPTraceExporter({
    url: target.url,
    timeoutMillis: 5_000,
    ...(Object.keys(headers).length > 0 ? { headers: { ...headers } } : {}),
  });
  const serviceName =
    options.config.telemetry.serviceName ?? (env.OTEL_SERVICE_NAME?.trim() || options.service);
  const headerValues = (list: string | undefined) =>
    (list ?? "").split(",").map((kv) => kv.slice(kv.indexOf("=") + 1).trim());
  // The exporter reads its header variables from process.env itself: both are scrubbed.
  const secrets = [env, process.env].flatMap((e) => [
    ...headerValues(e.OTEL_EXPORTER_OTLP_HEADERS),
    ...headerValues(e.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
  ]);
  secrets.push(...Object.values(headers));
  logger?.info(
    { endpoint, from: target.from, service: serviceName },
    "telemetry: traces exported over OTLP/HTTP",
  );
  return createTracing({
    exporter: reportingExporter(exporter, logger, secrets, endpoint),
    serviceName,
    ...(options.shutdownTimeoutMs === undefined
      ? {}
      : { shutdownTimeoutMs: options.shutdownTimeoutMs }),
  });
}
