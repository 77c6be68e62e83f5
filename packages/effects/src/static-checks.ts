import {
  aliasOf,
  type Config,
  type EffectSpec,
  isGitAttributesPath,
  isIdemError,
  type ValidationIssue,
} from "@idem/schema";
import { checkPatchSpec } from "./git/git-patch-effect.js";
import { patchPaths } from "./git/patch/patch-paths.js";
import { requestUrl } from "./http-request-effect.js";
import { publishSubject } from "./nats-publish-effect.js";
import {
  checkFullPath,
  checkGitFileContent,
  checkHeaders,
  checkMessage,
  checkRelativePath,
  refuse,
} from "./sandbox.js";

/**
 * The checks an effect's probe and apply make on the spec's text alone, run before the output is
 * recorded: commit messages, every path of a git.commit and file.write (git's own path rules,
 * `unsafeGitPath`: `.git` and `.gitmodules` in every NTFS and HFS+ spelling; segments within 255
 * bytes and the whole path under its target within PATH_MAX), the patch of a git.patch (parsed by
 * the applier's own reader: traversal, the same git path rules for every name its headers give,
 * rename targets included, absolute paths, symlinks and submodules, binary hunks, text that is not
 * a unified diff), a `.gitattributes` file's lines as git fsck reads them, http paths under their
 * target's base (no dot segment at any depth of percent-encoding), publish subjects under their
 * prefix, reserved headers and HTTP header values fetch sends byte for byte. Sizes, base64 and
 * duplicate paths are validateOutput's; no content is copied or decoded here (but a
 * `.gitattributes` file's), so an output without a patch costs a few string checks per path.
 *
 * What passes here cannot fail at interpretation for a reason the spec alone decides; the target
 * (a symlink on the way, a branch that moved) is checked again at apply. An alias that is not
 * configured is skipped here (validateOutput names it). Pure and deterministic: no I/O; each
 * issue's path is `effects.<i>.<field>` (e.g. `effects.0.patch`).
 */
export function staticEffectIssues(
  specs: readonly EffectSpec[],
  config: Config,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const max = config.limits.maxFileBytes;
  specs.forEach((spec, i) => {
    let fallback = "";
    try {
      switch (spec.kind) {
        case "git.commit":
          // gitCommitChanges' checks without copying the contents (validateOutput sized them).
          fallback = "files";
          checkMessage(spec.message);
          if (spec.files.length === 0) refuse("files", "must change at least one file");
          spec.files.forEach((f, j) => {
            checkRelativePath(`files.${j}.path`, f.path);
            checkFullPath(`files.${j}.path`, aliasOf(config.repos, spec.repo)?.path, f.path);
            if ("content" in f && isGitAttributesPath(f.path))
              checkGitFileContent(`files.${j}.content`, f.path, Buffer.from(f.content, "utf8"));
          });
          fileAndFolder(spec.files.map((f) => f.path));
          break;
        case "git.patch":
          fallback = "patch";
          for (const p of patchPaths(checkPatchSpec(spec, max)))
            checkFullPath("patch", aliasOf(config.repos, spec.repo)?.path, p);
          break;
        case "file.write":
          // fileWriteBytes' path check; base64 and size are validateOutput's, without a decode here.
          fallback = "path";
          checkRelativePath("path", spec.path);
          checkFullPath("path", aliasOf(config.roots, spec.root)?.path, spec.path);
          break;
        case "http.request": {
          fallback = "path";
          const t = aliasOf(config.http.targets, spec.target);
          if (t) requestUrl(t, spec.path);
          checkHeaders(spec.headers, false);
          break;
        }
        case "nats.publish": {
          fallback = "subject";
          const t = aliasOf(config.publish, spec.target);
          if (t) publishSubject(config, t, spec.subject);
          checkHeaders(spec.headers, true);
          break;
        }
      }
    } catch (e) {
      if (!isIdemError(e, "SANDBOX_VIOLATION") && !isIdemError(e, "INVALID_INPUT")) throw e;
      const field = typeof e.details?.field === "string" ? e.details.field : fallback;
      const message = e.message.startsWith(`${field} `)
        ? e.message.slice(field.length + 1)
        : e.message;
      issues.push({ path: `effects.${i}.${field}`, message });
    }
  });
  return issues;
}

/**
 * The tree writer's refusal that the spec alone decides: one path of a commit is a folder of
 * another ("a" and "a/b"). @throws IdemError SANDBOX_VIOLATION naming the deeper path.
 */
function fileAndFolder(paths: readonly string[]): void {
  const all = new Set(paths);
  paths.forEach((p, j) => {
    for (let k = p.indexOf("/"); k >= 0; k = p.indexOf("/", k + 1)) {
      const folder = p.slice(0, k);
      if (all.has(folder)) refuse(`files.${j}.path`, `"${folder}" is both a file and a directory`);
    }
  });
}
