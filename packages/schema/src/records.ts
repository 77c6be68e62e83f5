import { z } from "zod";
import type { Config } from "./config.js";
import { isSafeBranchName, issuePath } from "./config.js";
import { AGENT_PATTERN, EFFECT_TRAILER, JOB_ID_PATTERN } from "./ids.js";

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

/** Why a relative path is unsafe, or undefined when it is fine (absolute, `..`, `.git`, NUL, backslash). */
export function unsafeRelativePath(p: string): string | undefined {
  if (p.includes("\0")) return "may not contain NUL";
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return "must be relative, not absolute";
  if (p.includes("\\")) return "may not contain a backslash";
  const parts = p.split("/");
  if (parts.some((s) => s === "..")) return "may not contain '..'";
  if (parts.some((s) => s.toLowerCase() === ".git")) return "may not touch .git";
  if (parts.some((s) => s === "" || s === ".")) return "may not contain empty or '.' segments";
  if (p.startsWith("-")) return "may not start with '-'";
  return undefined;
}

/** Why an http path would leave its target's base URL, or undefined. */
export function unsafeUrlPath(p: string): string | undefined {
  if (p !== "" && !p.startsWith("/")) return "must start with /";
  if (p.startsWith("//")) return "may not start with //";
  if (/[\s\\\0]/.test(p)) return "may not contain whitespace or backslashes";
  if (/^[^?#]*(^|\/)\.\.?(\/|$|\?|#)/.test(p) || /%2e/i.test(p) || /%2f/i.test(p))
    return "may not contain dot segments";
  if (/^[a-z][a-z0-9+.-]*:/i.test(p)) return "may not be an absolute URL";
  return undefined;
}

function zodIssues(error: z.ZodError, prefix: (string | number)[] = []): ValidationIssue[] {
  return error.issues.map((i) => ({ path: issuePath([...prefix, ...i.path]), message: i.message }));
}

/** Deepest nesting accepted in a submission: deeper input is refused before zod recurses into it. */
export const MAX_JSON_DEPTH = 64;
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Checks the raw shape of submitted JSON before any schema runs, without recursion: nesting at most
 * MAX_JSON_DEPTH, every string and key well-formed Unicode (a lone surrogate would be stored as
 * U+FFFD, so two different outputs could share a content hash), and no prototype-polluting keys
 * (zod would silently drop `__proto__`, recording something other than what was sent).
 */
export function checkJsonShape(raw: unknown, maxDepth = MAX_JSON_DEPTH): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [
    { value: raw, path: "", depth: 0 },
  ];
  const join = (path: string, key: string | number) =>
    path === "" ? String(key) : `${path}.${key}`;
  while (stack.length > 0 && issues.length < 20) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === "string") {
      if (!isWellFormed(value))
        issues.push({ path, message: "is not well-formed Unicode (a lone surrogate)" });
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth >= maxDepth) {
      issues.push({ path, message: `nests deeper than ${maxDepth} levels` });
      continue;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        stack.push({ value: v, path: join(path, i), depth: depth + 1 });
      });
      continue;
    }
    for (const key of Object.keys(value)) {
      const at = join(path, key);
      if (FORBIDDEN_KEYS.has(key))
        issues.push({ path: at, message: `the key "${key}" is not allowed` });
      else if (!isWellFormed(key))
        issues.push({ path: at, message: "key is not well-formed Unicode" });
      else
        stack.push({ value: (value as Record<string, unknown>)[key], path: at, depth: depth + 1 });
    }
  }
  return issues;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function isWellFormed(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/** Validates a Job. */
export function validateJob(raw: unknown): Validated<Job> {
  const shape = checkJsonShape(raw);
  if (shape.length > 0) return { ok: false, issues: shape };
  const r = JobSchema.safeParse(raw);
  return r.success ? { ok: true, value: r.data } : { ok: false, issues: zodIssues(r.error) };
}

/**
 * Validates an AgentOutput against its schema and the config: every alias configured, branches
 * allowed, limits kept, nothing outside a target's sandbox by its text alone. Returns every issue,
 * each with its field path. Pure: the effects package checks the file system again before writing.
 */
export function validateOutput(raw: unknown, config: Config): Validated<AgentOutput> {
  const shape = checkJsonShape(raw);
  if (shape.length > 0) return { ok: false, issues: shape };
  const r = AgentOutputSchema.safeParse(raw);
  if (!r.success) return { ok: false, issues: zodIssues(r.error) };
  const out = r.data;
  const issues: ValidationIssue[] = [];
  if (out.effects.length > config.limits.maxEffects) {
    issues.push({
      path: "effects",
      message: `has ${out.effects.length} effects; limits.maxEffects is ${config.limits.maxEffects}`,
    });
  }
  const maxFile = config.limits.maxFileBytes;
  out.effects.forEach((e, i) => {
    const at = (field: string) => `effects.${i}.${field}`;
    switch (e.kind) {
      case "git.commit":
      case "git.patch": {
        const repo = config.repos[e.repo];
        if (!repo) {
          issues.push({ path: at("repo"), message: `unknown repo alias "${e.repo}"` });
          break;
        }
        if (
          e.branch !== undefined &&
          e.branch !== repo.branch &&
          !repo.branches.includes(e.branch)
        ) {
          issues.push({
            path: at("branch"),
            message: `branch "${e.branch}" is not allowed for repo "${e.repo}"`,
          });
        }
        if (e.kind === "git.commit") {
          e.files.forEach((f, j) => {
            if ("content" in f && Buffer.byteLength(f.content, "utf8") > maxFile) {
              issues.push({
                path: `effects.${i}.files.${j}.content`,
                message: `is larger than limits.maxFileBytes (${maxFile})`,
              });
            }
          });
          const seen = new Set<string>();
          e.files.forEach((f, j) => {
            if (seen.has(f.path))
              issues.push({
                path: `effects.${i}.files.${j}.path`,
                message: `"${f.path}" appears twice`,
              });
            seen.add(f.path);
          });
        } else if (Buffer.byteLength(e.patch, "utf8") > maxFile) {
          issues.push({
            path: at("patch"),
            message: `is larger than limits.maxFileBytes (${maxFile})`,
          });
        }
        break;
      }
      case "file.write": {
        if (!config.roots[e.root])
          issues.push({ path: at("root"), message: `unknown root alias "${e.root}"` });
        const bytes =
          e.encoding === "base64"
            ? decodedBase64Length(e.content)
            : Buffer.byteLength(e.content, "utf8");
        if (bytes === undefined)
          issues.push({ path: at("content"), message: "is not valid base64" });
        else if (bytes > maxFile)
          issues.push({
            path: at("content"),
            message: `is larger than limits.maxFileBytes (${maxFile})`,
          });
        break;
      }
      case "nats.publish": {
        const t = config.publish[e.target];
        if (!t) {
          issues.push({ path: at("target"), message: `unknown publish target "${e.target}"` });
          break;
        }
        const full = `${t.subjectPrefix}.${e.subject}`;
        const own = config.nats?.subjectPrefix ?? "idem";
        if (full === own || full.startsWith(`${own}.`)) {
          issues.push({ path: at("subject"), message: `"${full}" is one of idem's own subjects` });
        }
        break;
      }
      case "http.request": {
        if (!config.http.targets[e.target])
          issues.push({ path: at("target"), message: `unknown http target "${e.target}"` });
        break;
      }
    }
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: out };
}

function decodedBase64Length(s: string): number | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return undefined;
  return Buffer.from(s, "base64").length;
}

/**
 * The ordering targets an output's effects touch: `repo:<alias>@<branch>` for git effects and
 * `root:<alias>` for file writes. Runs that share a target are applied in recording order.
 */
export function effectTargets(output: AgentOutput, config: Config): string[] {
  const set = new Set<string>();
  for (const e of output.effects) {
    const t = effectTarget(e, config);
    if (t !== undefined) set.add(t);
  }
  return [...set].sort();
}

/** The ordering target of one effect, if it has one. */
export function effectTarget(e: EffectSpec, config: Config): string | undefined {
  if (e.kind === "git.commit" || e.kind === "git.patch") {
    return `repo:${e.repo}@${e.branch ?? config.repos[e.repo]?.branch ?? "main"}`;
  }
  if (e.kind === "file.write") return `root:${e.root}`;
  return undefined;
}

/**
 * Names where a JSON text is broken: "at line L, column C: <parser message>" when the parser gives
 * a position, else its message alone.
 */
export function describeJsonError(text: string, error: unknown): string {
  const msg = error instanceof Error ? error.message : String(error);
  const pos = /position (\d+)/.exec(msg);
  if (!pos) return msg;
  const before = text.slice(0, Number(pos[1]));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return `at line ${line}, column ${column}: ${msg}`;
}
