import { type GitRepos, repoDir, repoOf } from "@idem/git";
import { type AnyEffectKind, defineEffectKind } from "@idem/kit";
import {
  checkFullPath,
  checkGitFileContent,
  checkingField,
  checkMessage,
  checkRelativePath,
  isGitAttributesPath,
  refuse,
} from "../../sandbox.js";
import {
  checkGitTarget,
  GIT_CONFIG,
  gitAliases,
  gitBatchTarget,
  gitConfiguredBranches,
  gitKnownAliases,
  gitOrderingTargets,
  gitQueuedApplies,
  gitScan,
  probeGitBatch,
} from "../git/git-kind-parts.js";
import { type GitKindSettings, type GitResource, openGitResource } from "../git/git-resource.js";
import { applyGitCommit, probeGitCommit } from "./git-commit-effect.js";
import { type GitCommitSpec, GitCommitSpecSchema } from "./spec.js";

/**
 * `git.commit`: whole files committed onto a configured repository's branch with the effect key
 * as the commit's `Idem-Effect:` trailer. Probed by the key on the branch (an index of keys, never
 * a scan of history), applied by compare-and-swap from the probed head: exactly once in effect.
 * Its options are the config's `repos` section, shared with git.patch.
 */
export function createGitCommitKind(settings: GitKindSettings = {}): AnyEffectKind {
  return defineEffectKind<GitCommitSpec, GitRepos, GitResource>({
    name: "git.commit",
    description:
      "Commits whole files (content, or delete: true) onto a configured repository's branch, one commit carrying the effect key as its Idem-Effect trailer.",
    guarantee: "exactly-once-in-effect",
    spec: GitCommitSpecSchema,
    ...GIT_CONFIG,
    check(spec, ctx) {
      if (!checkGitTarget(spec, ctx)) return;
      if (spec.from !== undefined) {
        if (typeof repoOf(ctx.options, spec.repo)?.url !== "string")
          ctx.issue(
            "from",
            `starts a new branch on a repo on a server only (repo "${spec.repo}" has no url)`,
          );
        else if (spec.branch === undefined || spec.branch === spec.from)
          ctx.issue("from", "needs a branch of its own to start (branch, not the same as from)");
      }
      const max = ctx.limits.maxFileBytes;
      const seen = new Set<string>();
      let sized = true;
      spec.files.forEach((f, j) => {
        if ("content" in f && Buffer.byteLength(f.content, "utf8") > max) {
          ctx.issue(`files.${j}.content`, `is larger than limits.maxFileBytes (${max})`);
          sized = false;
        }
        if (seen.has(f.path)) {
          ctx.issue(`files.${j}.path`, `"${f.path}" appears twice`);
          sized = false;
        }
        seen.add(f.path);
      });
      if (!sized) return;
      // What the commit's build checks on the spec's text alone, without copying the contents.
      checkingField("files", () => {
        checkMessage(spec.message);
        if (spec.files.length === 0) refuse("files", "must change at least one file");
        const repo = repoOf(ctx.options, spec.repo);
        const repoPath = repo && repoDir(repo);
        spec.files.forEach((f, j) => {
          checkRelativePath(`files.${j}.path`, f.path);
          checkFullPath(`files.${j}.path`, repoPath, f.path);
          if ("content" in f && isGitAttributesPath(f.path))
            checkGitFileContent(`files.${j}.content`, f.path, Buffer.from(f.content, "utf8"));
        });
        fileAndFolder(spec.files.map((f) => f.path));
      });
    },
    targets: gitOrderingTargets,
    aliases: gitAliases,
    knownAliases: gitKnownAliases,
    approval: {
      facts: ["branch", "paths"],
      factsOf: (spec) => ({
        branch: spec.branch ?? "(default)",
        paths: spec.files.map((f) => f.path),
      }),
    },
    describe: (spec) =>
      `${spec.repo}@${spec.branch ?? "(default branch)"}${spec.from === undefined ? "" : ` (new from ${spec.from})`}: ${firstLine(spec.message)} (${spec.files.length} file${spec.files.length === 1 ? "" : "s"})`,
    probeable: () => true,
    targetDedup: () => true,
    queuedApplies: gitQueuedApplies,
    open: (ctx) => openGitResource(ctx, settings),
    probe: (spec, call) =>
      probeGitCommit(call.resource, spec, { ...call, maxFileBytes: call.limits.maxFileBytes }),
    apply: (spec, call) =>
      applyGitCommit(call.resource, spec, { ...call, maxFileBytes: call.limits.maxFileBytes }),
    batchTarget: gitBatchTarget,
    probeBatch: probeGitBatch,
    scan: {
      ...gitScan,
      configured: (ctx) => gitConfiguredBranches<GitCommitSpec>("git.commit", ctx),
    },
    samples: {
      valid: (i, ctx) => ({
        kind: "git.commit" as const,
        repo: Object.keys(ctx.options as GitRepos)[0] ?? "repo",
        message: `idem drill ${i}`,
        files: [{ path: `idem-drill/${i}.txt`, content: `drill ${i}\n` }],
      }),
      invalid: [
        { spec: { kind: "git.commit", repo: "r", message: "m", files: [] }, field: "files" },
        {
          spec: {
            kind: "git.commit",
            repo: "r",
            message: "m",
            files: [{ path: "../x", content: "" }],
          },
          field: "files.0.path",
        },
      ],
    },
  });
}

/** idem's git.commit, with the default settings. */
export const gitCommitKind = createGitCommitKind();

/** The first line of a commit message, for one-line listings. */
export function firstLine(message: string): string {
  const line = message.split("\n", 1)[0] ?? "";
  return line.length > 72 ? `${line.slice(0, 71)}…` : line;
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
