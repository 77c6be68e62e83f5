import { z } from "zod";
import { unsafeHttpHeaderValue } from "./http-header-value.js";

// The pieces effect kinds build their spec schemas from (@idem/effects' kinds/<kind>/spec.ts):
// vocabulary every kind checks the same way. Pure zod, no I/O.

/** A target alias: a key of a kind's config section. */
export const AliasSchema = z.string().min(1).max(64);

/** Headers idem sets itself, which an effect may not name. */
export const RESERVED_HEADERS = ["idempotency-key", "nats-msg-id", "host", "authorization"];
const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "is not a valid header name");
const headerValue = z
  .string()
  .max(8192)
  .refine((v) => !/[\r\n\0]/.test(v), "may not contain CR, LF or NUL");
/** An HTTP header value must reach the target byte for byte (fetch refuses or trims the rest). */
const httpHeaderValue = headerValue.superRefine((v, ctx) => {
  const why = unsafeHttpHeaderValue(v);
  if (why) ctx.addIssue({ code: "custom", message: why });
});
const headersOf = (value: typeof headerValue) =>
  z.record(headerName, value).superRefine((h, ctx) => {
    for (const name of Object.keys(h)) {
      if (RESERVED_HEADERS.includes(name.toLowerCase())) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `header ${name} is reserved to idem`,
        });
      }
    }
  });
/** Message headers (a NATS message's): names and values without CR, LF or NUL; none of idem's own. */
export const HeadersSchema = headersOf(headerValue);
/** HTTP request headers: as HeadersSchema, and each value sent byte for byte (Latin-1 at most). */
export const HttpHeadersSchema = headersOf(httpHeaderValue);
