// The `http` section of the config, owned by http.request: its targets by alias, each a base URL
// with how it deduplicates, how it is probed, and the headers whose values come from the
// environment.
import {
  ALIAS_PATTERN,
  NO_CREDENTIALS,
  positiveMs,
  unsafeUrlPath,
  urlHasCredentials,
} from "@idem/kit";
import { z } from "zod";

/** A JSON pointer (RFC 6901): empty for the whole document, else `/`-separated tokens. */
const jsonPointer = z
  .string()
  .max(512)
  .regex(/^(\/([^~]|~[01])*)*$/, "must be a JSON pointer: empty, or /a/b (~0 for ~, ~1 for /)");
const headerName = z
  .string()
  .max(128)
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be a header name");
/** Headers idem sets or the transport owns, which the config cannot give either. */
const OWN_HEADERS = [
  "idempotency-key",
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
];

/**
 * `http.targets.<alias>.lookup`: how to find an effect at a target by its key, for an API with a
 * search by an external id (docs/kinds/http.md). The request carries the key where the API keeps
 * the external id (`keyField` in the JSON body, or `keyHeader`); the probe GETs `path` with
 * `{key}` replaced by the percent-encoded key and looks for the key at `match` in the JSON answer.
 */
export const HttpLookupSchema = z
  .strictObject({
    /** A path under baseUrl (a query string too) holding `{key}`. */
    path: z
      .string()
      .min(1)
      .max(2048)
      .refine((p) => p.includes("{key}"), "must hold {key}")
      .refine(
        (p) => unsafeUrlPath(p.replaceAll("{key}", "k")) === undefined,
        "must be a path under the target's baseUrl",
      ),
    /**
     * Whether a 404 answers absent (a lookup by id: `/tickets/external/{key}`). Default false: a
     * search answers 200 with none found, and a 404 there means the path is wrong.
     */
    absentOn404: z.boolean().default(false),
    /** Where in the answer: an array (its items, or each item's `field`, compared) or one value. */
    match: jsonPointer,
    /** In each item of the array `match` points at, where the key is (default: the item itself). */
    field: jsonPointer.optional(),
    /** Where idem sets the key in the request's JSON body (an object; parents made as needed). */
    keyField: jsonPointer.refine((p) => p !== "", "must point inside the body").optional(),
    /** A header idem sends the key in. */
    keyHeader: headerName
      .refine((h) => !OWN_HEADERS.includes(h.toLowerCase()), "is a header idem sets itself")
      .optional(),
  })
  .superRefine((l, ctx) => {
    // Without either, the key never reaches the service: the lookup could never find the effect,
    // and a crash after sending would post it again where it was otherwise left uncertain.
    if (l.keyField === undefined && l.keyHeader === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["keyField"],
        message:
          "give keyField or keyHeader: the create must carry the key where the lookup finds it",
      });
  });
/** A parsed `http.targets.<alias>.lookup`. */
export type HttpLookup = z.infer<typeof HttpLookupSchema>;

/**
 * `http.targets.<alias>`: a base URL that `http.request` effects call.
 *
 * Whether it deduplicates by Idempotency-Key, how it is probed (`probeUrl`, 200/404; or a
 * `lookup` by the key kept as an external id), and the headers whose values come from the
 * environment (credentials: `{ "Authorization": "ACME_AUTH" }`).
 */
export const HttpTargetSchema = z
  .strictObject({
    baseUrl: z.url({ protocol: /^https?$/ }),
    idempotencyKeys: z.boolean().default(false),
    probeUrl: z.string().nullable().default(null),
    lookup: HttpLookupSchema.optional(),
    /** Header name to the NAME of the environment variable holding its value. */
    headersEnv: z
      .record(
        headerName.refine(
          (h) => !OWN_HEADERS.includes(h.toLowerCase()),
          "is a header idem sets itself",
        ),
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name"),
      )
      .optional(),
    timeoutMs: positiveMs.default(10_000),
  })
  .superRefine((t, ctx) => {
    if (t.probeUrl !== null && t.lookup !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["lookup"],
        message: "give one of probeUrl and lookup: each is a way to probe",
      });
    const lower = Object.keys(t.headersEnv ?? {}).map((h) => h.toLowerCase());
    if (new Set(lower).size !== lower.length)
      ctx.addIssue({ code: "custom", path: ["headersEnv"], message: "names a header twice" });
    const keyHeader = t.lookup?.keyHeader?.toLowerCase();
    if (keyHeader !== undefined && lower.includes(keyHeader))
      ctx.addIssue({
        code: "custom",
        path: ["lookup", "keyHeader"],
        message: "is also in headersEnv",
      });
  });
/** A parsed `http.targets.<alias>`. */
export type HttpTarget = z.infer<typeof HttpTargetSchema>;

/**
 * The `http` section: http.request's options. A `probeUrl` is an http(s) URL or a path under the
 * target's `baseUrl`; neither URL may carry credentials (they come from `headersEnv`).
 */
export const HttpSectionSchema = z.strictObject({
  targets: z
    .record(
      z.string().regex(ALIAS_PATTERN, "must be an alias: letters, digits, _ and -"),
      HttpTargetSchema.superRefine((t, ctx) => {
        if (t.probeUrl !== null && !/^https?:\/\//.test(t.probeUrl) && !t.probeUrl.startsWith("/"))
          ctx.addIssue({
            code: "custom",
            path: ["probeUrl"],
            message: "must be an http(s) URL or a path under baseUrl",
          });
        for (const key of ["baseUrl", "probeUrl"] as const) {
          const url = t[key];
          if (url !== null && urlHasCredentials(url))
            ctx.addIssue({ code: "custom", path: [key], message: NO_CREDENTIALS });
        }
      }),
    )
    .default({}),
});

/** http.request's options: `{ targets }`. */
export type HttpSection = z.infer<typeof HttpSectionSchema>;
