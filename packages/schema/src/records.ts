import { z } from "zod";
import { isSafeBranchName } from "./config.js";
import { AGENT_PATTERN, EFFECT_TRAILER, JOB_ID_PATTERN } from "./ids.js";
import { unsafeRelativePath, unsafeUrlPath } from "./unsafe-relative-path.js";

export const JobIdSchema = z
  .string()
  .regex(
    JOB_ID_PATTERN,
    "must start with a letter or digit and hold only A-Z a-z 0-9 . _ : - (128 at most)",
  );
export const AgentNameSchema = z
  .string()
  .regex(AGENT_PATTERN, "must start with a-z or 0-9 and hold only a-z 0-9 _ - (64 at most)");

/**
 * Any JSON value (null, boolean, number, string, array, object), one instance for every such field
 * so the JSON Schemas name it once (`$defs.JsonValue`).
 */
export const JsonValueSchema = z.json();

/** A unit of work for an agent, keyed by job ID. */
export const JobSchema = z.strictObject({
  jobId: JobIdSchema,
  agent: AgentNameSchema,
  input: JsonValueSchema,
  createdAt: z.iso.datetime({ offset: true }).optional(),
});
export type Job = z.infer<typeof JobSchema>;

const alias = z.string().min(1).max(64);
/** A path relative to a repo or root, checked statically here and against the file system by the effects. */
const relPath = z
  .string()
  .min(1)
  .max(4096)
  .superRefine((p, ctx) => {
    const why = unsafeRelativePath(p);
    if (why) ctx.addIssue({ code: "custom", message: why });
  });
const branch = z
  .string()
  .min(1)
  .max(200)
  .refine(isSafeBranchName, "is not a safe branch name (git check-ref-format, no leading -)");
const message = z
  .string()
  .min(1)
  .max(65_536)
  .refine(
    (m) => !new RegExp(`^\\s*${EFFECT_TRAILER}\\s*:`, "im").test(m),
    `may not contain an ${EFFECT_TRAILER}: line of its own`,
  );
const RESERVED_HEADERS = ["idempotency-key", "nats-msg-id", "host", "authorization"];
const headers = z
  .record(
    z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "is not a valid header name"),
    z
      .string()
      .max(8192)
      .refine((v) => !/[\r\n\0]/.test(v), "may not contain CR, LF or NUL"),
  )
  .superRefine((h, ctx) => {
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

const GitFileSchema = z.union([
  z.strictObject({ path: relPath, content: z.string() }),
  z.strictObject({ path: relPath, delete: z.literal(true) }),
]);

export const GitCommitSpecSchema = z.strictObject({
  kind: z.literal("git.commit"),
  repo: alias,
  branch: branch.optional(),
  message,
  files: z.array(GitFileSchema).min(1, "must change at least one file"),
});
export const GitPatchSpecSchema = z.strictObject({
  kind: z.literal("git.patch"),
  repo: alias,
  branch: branch.optional(),
  message,
  patch: z.string().min(1),
});
export const FileWriteSpecSchema = z.strictObject({
  kind: z.literal("file.write"),
  root: alias,
  path: relPath,
  content: z.string(),
  encoding: z.enum(["utf8", "base64"]).optional(),
});
export const NatsPublishSpecSchema = z.strictObject({
  kind: z.literal("nats.publish"),
  target: alias,
  subject: z
    .string()
    .min(1)
    .max(255)
    .regex(
      /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/,
      "must be dot-separated tokens: no wildcards, $ or spaces",
    ),
  data: JsonValueSchema,
  headers: headers.optional(),
});
export const HttpRequestSpecSchema = z.strictObject({
  kind: z.literal("http.request"),
  target: alias,
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
  path: z
    .string()
    .max(2048)
    .refine((p) => unsafeUrlPath(p) === undefined, {
      message: "must be a path under the target's baseUrl",
    }),
  body: JsonValueSchema.optional(),
  headers: headers.optional(),
});

export const EffectSpecSchema = z.discriminatedUnion("kind", [
  GitCommitSpecSchema,
  GitPatchSpecSchema,
  FileWriteSpecSchema,
  NatsPublishSpecSchema,
  HttpRequestSpecSchema,
]);
export type EffectSpec = z.infer<typeof EffectSpecSchema>;
export type GitCommitSpec = z.infer<typeof GitCommitSpecSchema>;
export type GitPatchSpec = z.infer<typeof GitPatchSpecSchema>;
export type FileWriteSpec = z.infer<typeof FileWriteSpecSchema>;
export type NatsPublishSpec = z.infer<typeof NatsPublishSpecSchema>;
export type HttpRequestSpec = z.infer<typeof HttpRequestSpecSchema>;
export type EffectKind = EffectSpec["kind"];
export const EFFECT_KINDS = [
  "git.commit",
  "git.patch",
  "file.write",
  "nats.publish",
  "http.request",
] as const;

export const AgentOutputSchema = z.strictObject({
  jobId: JobIdSchema,
  agent: AgentNameSchema,
  summary: z.string().max(65_536).optional(),
  effects: z.array(EffectSpecSchema),
  meta: z.record(z.string(), JsonValueSchema).optional(),
});
export type AgentOutput = z.infer<typeof AgentOutputSchema>;

/** One problem with a submission, named by its field path (`effects.0.repo`). */
export interface ValidationIssue {
  path: string;
  message: string;
}
export type Validated<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };
