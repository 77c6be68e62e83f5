import type { z } from "zod";
import { aliasOf } from "./alias-of.js";
import { checkJsonShape } from "./check-json-shape.js";
import type { Config } from "./config.js";
import { issuePath } from "./config.js";
import type { AgentOutput, Job, Validated, ValidationIssue } from "./records.js";
import { AgentOutputSchema, JobSchema } from "./records.js";

function zodIssues(error: z.ZodError, prefix: (string | number)[] = []): ValidationIssue[] {
  return error.issues.map((i) => ({ path: issuePath([...prefix, ...i.path]), message: i.message }));
}

/**
 * Validates a Job as sent by a client: first its raw JSON shape (`checkJsonShape`), then JobSchema.
 *
 * Never throws: every problem comes back as an issue with its field path, and nothing is written.
 * Whether the job ID is already enqueued (duplicate or JOB_CONFLICT) is the journal's question.
 */
export function validateJob(raw: unknown): Validated<Job> {
  const shape = checkJsonShape(raw);
  if (shape.length > 0) return { ok: false, issues: shape };
  const r = JobSchema.safeParse(raw);
  return r.success ? { ok: true, value: r.data } : { ok: false, issues: zodIssues(r.error) };
}

/**
 * Validates an AgentOutput against its schema and the config.
 *
 * Checked: its raw JSON shape, every alias configured, branches allowed, limits kept (`maxEffects`,
 * `maxFileBytes`), base64 well-formed, no publish on idem's own subjects, nothing outside a
 * target's sandbox by its text alone.
 *
 * Never throws: every issue comes back with its field path (an invalid submission writes nothing).
 * Pure and deterministic, so the executor, the HTTP API and `idem submit` refuse the same outputs;
 * the effects package checks the file system again before writing. `limits.maxOutputBytes` is the
 * caller's check on the raw text, before parsing.
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
        const repo = aliasOf(config.repos, e.repo);
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
        if (!aliasOf(config.roots, e.root))
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
        const t = aliasOf(config.publish, e.target);
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
        if (!aliasOf(config.http.targets, e.target))
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
