import { AliasSchema, HttpHeadersSchema, JsonValueSchema, unsafeUrlPath } from "@idem/kit";
import { z } from "zod";

/**
 * `http.request`: one request to a path under a target's base URL.
 *
 * It carries the effect key as `Idempotency-Key`; without `idempotencyKeys` on the target, an
 * outcome lost in a crash is `uncertain` and waits for a human.
 */
export const HttpRequestSpecSchema = z.strictObject({
  kind: z.literal("http.request"),
  target: AliasSchema,
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
  path: z
    .string()
    .max(2048)
    .refine((p) => unsafeUrlPath(p) === undefined, {
      message: "must be a path under the target's baseUrl",
    }),
  body: JsonValueSchema.optional(),
  headers: HttpHeadersSchema.optional(),
});
/** A parsed `http.request` effect. */
export type HttpRequestSpec = z.infer<typeof HttpRequestSpecSchema>;
