// idem's own effect kinds, one folder each, written with @idem/kit as any user's kind is.
import type { AnyEffectKind } from "@idem/kit";
import type { PublishTransport } from "../publish-transport.js";
import { fileWriteKind } from "./file-write/file-write-kind.js";
import type { GitKindSettings } from "./git/git-resource.js";
import { createGitCommitKind, gitCommitKind } from "./git-commit/git-commit-kind.js";
import { createGitPatchKind, gitPatchKind } from "./git-patch/git-patch-kind.js";
import { githubCommentKind } from "./github-comment/github-comment-kind.js";
import { githubIssueKind } from "./github-issue/github-issue-kind.js";
import { githubPullRequestKind } from "./github-pull-request/github-pull-request-kind.js";
import { httpRequestKind } from "./http-request/http-request-kind.js";
import { createNatsPublishKind, natsPublishKind } from "./nats-publish/nats-publish-kind.js";
import { slackMessageKind } from "./slack-message/slack-message-kind.js";
import { sqlExecKind } from "./sql-exec/sql-exec-kind.js";

/** What some of idem's own kinds are built with: what a process (or an embedder) decides. */
export interface BuiltInKindParts {
  /**
   * How nats.publish reaches its broker: a factory of transports, called once per host by the
   * kind's `open` (@idem/nats's `createJetStreamPublishTransport`, which @idem/core's `loadKinds`
   * passes). Without one, applying a nats.publish fails with INVALID_STATE.
   */
  publishTransport?: () => PublishTransport;
  /** How the git kinds treat their repositories (durability, lock waits). */
  git?: GitKindSettings;
}

/** idem's built-in kinds built with `parts`, in the order the docs list them. */
export function builtInKinds(parts: BuiltInKindParts = {}): readonly AnyEffectKind[] {
  const git = parts.git ?? {};
  return [
    parts.git ? createGitCommitKind(git) : gitCommitKind,
    parts.git ? createGitPatchKind(git) : gitPatchKind,
    fileWriteKind,
    parts.publishTransport ? createNatsPublishKind(parts.publishTransport) : natsPublishKind,
    httpRequestKind,
    githubPullRequestKind,
    githubIssueKind,
    githubCommentKind,
    slackMessageKind,
    sqlExecKind,
  ];
}

/** idem's built-in kinds with their defaults (no NATS transport: a nats.publish apply fails). */
export const BUILT_IN_KINDS: readonly AnyEffectKind[] = builtInKinds();

export type { FileWriteSpec } from "./file-write/spec.js";
export type { GitCommitSpec } from "./git-commit/spec.js";
export type { GitPatchSpec } from "./git-patch/spec.js";
export type { HttpRequestSpec } from "./http-request/spec.js";
export type { NatsPublishSpec } from "./nats-publish/spec.js";
export type { SqlExecSpec } from "./sql-exec/spec.js";
export {
  fileWriteKind,
  gitCommitKind,
  githubCommentKind,
  githubIssueKind,
  githubPullRequestKind,
  gitPatchKind,
  httpRequestKind,
  natsPublishKind,
  slackMessageKind,
  sqlExecKind,
};
