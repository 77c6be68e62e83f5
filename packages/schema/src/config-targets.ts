// The targets a config names by alias (repos, roots, publish and http targets), and the small
// pieces every config section is built from.
import { z } from "zod";
import { ALIAS_PATTERN } from "./ids.js";

export const ms = z.number().int().nonnegative();
export const positiveMs = z.number().int().positive();
export const aliasMap = <T extends z.ZodType>(value: T) =>
  z
    .record(z.string().regex(ALIAS_PATTERN, "must be an alias: letters, digits, _ and -"), value)
    .default({} as never);

const AuthorSchema = z.strictObject({
  name: z.string().min(1).default("idem"),
  email: z.string().min(1).default("idem@localhost"),
});

/**
 * `repos.<alias>`: the git repository that git effects commit to: a working tree or bare repo on
 * this host (`path`), or a repository on a server (`url`, pushed from a per-host mirror kept in
 * `cacheDir`); exactly one of `path` and `url`.
 *
 * Its default branch, the other branches agents may name, the commit author.
 */
export const RepoConfigSchema = z.strictObject({
  path: z.string().min(1).optional(),
  url: z.string().min(1).optional(),
  cacheDir: z.string().min(1).optional(),
  branch: z.string().min(1).default("main"),
  branches: z.array(z.string().min(1)).default([]),
  author: AuthorSchema.default({ name: "idem", email: "idem@localhost" }),
});

/** `roots.<alias>`: a folder that `file.write` effects write under. */
export const RootConfigSchema = z.strictObject({ path: z.string().min(1) });

/** `publish.<alias>`: a subject prefix and the stream that must capture it, for `nats.publish`. */
export const PublishTargetSchema = z.strictObject({
  subjectPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "must be dot-separated tokens without wildcards"),
  stream: z.string().regex(/^[A-Za-z0-9_-]+$/, "must be a stream name"),
  url: z.string().nullable().default(null),
});

/**
 * `http.targets.<alias>`: a base URL that `http.request` effects call.
 *
 * Whether it deduplicates by Idempotency-Key, and the URL that probes it.
 */
export const HttpTargetSchema = z.strictObject({
  baseUrl: z.url({ protocol: /^https?$/ }),
  idempotencyKeys: z.boolean().default(false),
  probeUrl: z.string().nullable().default(null),
  timeoutMs: positiveMs.default(10_000),
});
