// idem's own effect kinds, one folder each, written with @idem/kit as any user's kind is.
import type { AnyEffectKind } from "@idem/kit";
import { fileWriteKind } from "./file-write/file-write-kind.js";
import { gitCommitKind } from "./git-commit/git-commit-kind.js";
import { gitPatchKind } from "./git-patch/git-patch-kind.js";
import { githubCommentKind } from "./github-comment/github-comment-kind.js";
import { githubIssueKind } from "./github-issue/github-issue-kind.js";
import { githubPullRequestKind } from "./github-pull-request/github-pull-request-kind.js";
import { httpRequestKind } from "./http-request/http-request-kind.js";
import { natsPublishKind } from "./nats-publish/nats-publish-kind.js";
import { slackMessageKind } from "./slack-message/slack-message-kind.js";
import { sqlExecKind } from "./sql-exec/sql-exec-kind.js";

/** idem's built-in kinds, in the order the docs list them. */
export const BUILT_IN_KINDS: readonly AnyEffectKind[] = [
  gitCommitKind,
  gitPatchKind,
  fileWriteKind,
  natsPublishKind,
  httpRequestKind,
  githubPullRequestKind,
  githubIssueKind,
  githubCommentKind,
  slackMessageKind,
  sqlExecKind,
];

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
