// The OpenTelemetry packages, required on first use instead of imported: a process with telemetry
// off (the default) that reads no traceparent loads none of them, and importing @idem/core costs
// nothing for them. They are CommonJS (Node loads their CommonJS build for an import too, so this
// is the same module instance), which keeps the tracing facade synchronous.
import { createRequire } from "node:module";
import type * as OtelApi from "@opentelemetry/api";
import type * as OtelCore from "@opentelemetry/core";
import type * as OtlpTraceExporterHttp from "@opentelemetry/exporter-trace-otlp-http";
import type * as OtelResources from "@opentelemetry/resources";
import type * as OtelTraceBase from "@opentelemetry/sdk-trace-base";

const requireCjs = createRequire(import.meta.url);

let api: typeof OtelApi | undefined;
let core: typeof OtelCore | undefined;
let resources: typeof OtelResources | undefined;
let traceBase: typeof OtelTraceBase | undefined;
let otlpHttp: typeof OtlpTraceExporterHttp | undefined;

/** `@opentelemetry/api`, required the first time it is needed. */
export const otelApi = (): typeof OtelApi =>
  (api ??= requireCjs("@opentelemetry/api") as typeof OtelApi);

/** `@opentelemetry/core`, required the first time it is needed. */
export const otelCore = (): typeof OtelCore =>
  (core ??= requireCjs("@opentelemetry/core") as typeof OtelCore);

/** `@opentelemetry/resources`, required the first time it is needed. */
export const otelResources = (): typeof OtelResources =>
  (resources ??= requireCjs("@opentelemetry/resources") as typeof OtelResources);

/** `@opentelemetry/sdk-trace-base`, required the first time it is needed. */
export const otelTraceBase = (): typeof OtelTraceBase =>
  (traceBase ??= requireCjs("@opentelemetry/sdk-trace-base") as typeof OtelTraceBase);

/** `@opentelemetry/exporter-trace-otlp-http`, required the first time it is needed. */
export const otlpTraceExporterHttp = (): typeof OtlpTraceExporterHttp =>
  (otlpHttp ??= requireCjs(
    "@opentelemetry/exporter-trace-otlp-http",
  ) as typeof OtlpTraceExporterHttp);
