import { z } from "zod";
import { isSafeBranchName } from "./config.js";
import { AGENT_PATTERN, EFFECT_TRAILER, JOB_ID_PATTERN } from "./ids.js";
import { unsafeRelativePath, unsafeUrlPath } from "./unsafe-relative-path.js";

/** A job ID: JOB_ID_PATTERN, so it is safe in a NATS message ID, a path segment and a ref. */
export const JobIdSchema = z
  .string()
  .regex(
    JOB_ID_PATTERN,
    "must start with a letter or digit and hold only A-Z a-z 0-9 . _ : - (128 at most)",
  );
/** An agent name: AGENT_PATTERN, since it becomes a NATS subject token. */
export const AgentNameSchema = z
  .string()
  .regex(AGENT_PATTERN, "must start with a-z or 0-9 and hold only a-z 0-9 _ - (64 at most)");

/**
 * Any JSON value (null, boolean, number, string, array, object).
 *
 * One instance for every such field, so the JSON Schemas name it once (`$defs.JsonValue`).
 */
export const JsonValueSchema = z.json();

/**
 * A unit of work for an agent, keyed by job ID: `{ jobId, agent, input, createdAt? }`.
 *
 * Enqueueing the same job ID again with the same input is a duplicate, with a different input a
 * conflict (JOB_CONFLICT); `validateJob` runs this schema after `checkJsonShape`.
 */
export const JobSchema = z.strictObject({
  jobId: JobIdSchema,
  agent: AgentNameSchema,
  input: JsonValueSchema,
  createdAt: z.iso.datetime({ offset: true }).optional(),
});
/** A parsed Job. */
export type Job = z.infer<typeof JobSchema>;

const alias = z.string().min(1).max(64);
/** A path relative to a repo or root: checked here by its text, by the effects on disk. */
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

/**
 * `git.commit`: one commit of whole files onto the repo's branch.
 *
 * Each file is given whole (`content`) or removed (`delete: true`). The commit carries the effect
 * key as its `Idem-Effect:` trailer, so a probe finds it on the branch after a crash.
 */
export const GitCommitSpecSchema = z.strictObject({
  kind: z.literal("git.commit"),
  repo: alias,
  branch: branch.optional(),
  message,
  files: z.array(GitFileSchema).min(1, "must change at least one file"),
});
/**
 * `git.patch`: a unified text diff (as `git diff` writes it), applied and committed.
 *
 * Committed with its `Idem-Effect:` trailer, as `git.commit`.
 */
export const GitPatchSpecSchema = z.strictObject({
  kind: z.literal("git.patch"),
  repo: alias,
  branch: branch.optional(),
  message,
  patch: z.string().min(1),
});
/**
 * `file.write`: the whole content of one file under a configured root.
 *
 * utf8 or base64, written by rename. A later recorded write to the same path supersedes it: it is
 * then skipped, never rolled back.
 */
export const FileWriteSpecSchema = z.strictObject({
  kind: z.literal("file.write"),
  root: alias,
  path: relPath,
  content: z.string(),
  encoding: z.enum(["utf8", "base64"]).optional(),
});
/**
 * `nats.publish`: one message on `<target prefix>.<subject>`.
 *
 * Deduplicated by JetStream with the effect key as Nats-Msg-Id.
 */
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
/**
 * `http.request`: one request to a path under a target's base URL.
 *
 * It carries the effect key as `Idempotency-Key`; without `idempotencyKeys` on the target, an
 * outcome lost in a crash is `uncertain` and waits for a human.
 */
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

/**
 * One effect an agent asks for: a union on `kind`.
 *
 * Targets are named by alias, never by path, URL or raw subject.
 */
export const EffectSpecSchema = z.discriminatedUnion("kind", [
  GitCommitSpecSchema,
  GitPatchSpecSchema,
  FileWriteSpecSchema,
  NatsPublishSpecSchema,
  HttpRequestSpecSchema,
]);
/** A parsed EffectSpec, one of the five kinds. */
export type EffectSpec = z.infer<typeof EffectSpecSchema>;
/** A parsed `git.commit` effect. */
export type GitCommitSpec = z.infer<typeof GitCommitSpecSchema>;
/** A parsed `git.patch` effect. */
export type GitPatchSpec = z.infer<typeof GitPatchSpecSchema>;
/** A parsed `file.write` effect. */
export type FileWriteSpec = z.infer<typeof FileWriteSpecSchema>;
/** A parsed `nats.publish` effect. */
export type NatsPublishSpec = z.infer<typeof NatsPublishSpecSchema>;
/** A parsed `http.request` effect. */
export type HttpRequestSpec = z.infer<typeof HttpRequestSpecSchema>;
/** The `kind` of an effect. */
export type EffectKind = EffectSpec["kind"];
/** Every effect kind, in the order docs/agents.md ("Effects") lists them. */
export const EFFECT_KINDS = [
  "git.commit",
  "git.patch",
  "file.write",
  "nats.publish",
  "http.request",
] as const;

/**
 * What an agent sends back for one job: `{ jobId, agent, summary?, effects, meta? }`.
 *
 * `effects` may be empty.
 *
 * Recorded once per job ID: the same content hash again is a duplicate, a different one a conflict
 * (OUTPUT_CONFLICT, kept in the rejections). The schema alone does not know the config; use
 * `validateOutput`, which also runs `checkJsonShape` and checks aliases, branches and limits.
 */
export const AgentOutputSchema = z.strictObject({
  jobId: JobIdSchema,
  agent: AgentNameSchema,
  summary: z.string().max(65_536).optional(),
  effects: z.array(EffectSpecSchema),
  meta: z.record(z.string(), JsonValueSchema).optional(),
});
/** A parsed AgentOutput. */
export type AgentOutput = z.infer<typeof AgentOutputSchema>;

/** One problem with a submission, named by its field path (`effects.0.repo`). */
export interface ValidationIssue {
  /** The field path, dot-separated; empty for the whole value. */
  path: string;
  /** What is wrong, fit for the person or agent who sent it. */
  message: string;
}
/** A validation's answer: the parsed value, or every issue found (never an exception). */
export type Validated<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };
