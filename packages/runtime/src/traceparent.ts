import type { SpanContext } from "@opentelemetry/api";
import { otelApi, otelCore } from "./opentelemetry.js";

/** The W3C header and NATS header name that carries a trace context. */
export const TRACEPARENT_HEADER = "traceparent";

/** Longer than any traceparent of a known version (55 characters for version 00). */
const MAX_TRACEPARENT_LENGTH = 256;

/**
 * The span context a W3C `traceparent` names, marked remote, or undefined when the value is absent
 * or not a valid traceparent (all-zero IDs, version ff, upper-case hex, extra fields on version 00).
 * Pure; never throws: a bad header from a client only loses its trace, never the job.
 */
export function parseTraceparent(value: string | null | undefined): SpanContext | undefined {
  if (typeof value !== "string" || value.length > MAX_TRACEPARENT_LENGTH) return undefined;
  const parsed = otelCore().parseTraceParent(value.trim());
  if (!parsed) return undefined;
  const context: SpanContext = { ...parsed, isRemote: true };
  return otelApi().isSpanContextValid(context) ? context : undefined;
}

/** The version-00 `traceparent` of a span context (`00-<trace>-<span>-<flags>`). Pure. */
export function formatTraceparent(context: SpanContext): string {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/**
 * A traceparent as idem stores it: re-formatted as version 00 when valid, undefined otherwise.
 * What reaches the journal or a NATS header is always this form. Pure; never throws.
 */
export function normalizeTraceparent(value: string | null | undefined): string | undefined {
  const context = parseTraceparent(value);
  return context && formatTraceparent(context);
}

/** The trace ID of a traceparent (32 hex digits), or undefined when it is not valid. Pure. */
export function traceIdOf(value: string | null | undefined): string | undefined {
  return parseTraceparent(value)?.traceId;
}
