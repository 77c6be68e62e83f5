export { DEFAULT_SUBJECT_PREFIX } from "@idem/schema";
export type { IdemClientErrorCode } from "./client-error.js";
export { IdemClientError, isIdemClientError } from "./client-error.js";
export type {
  ClientEnqueueAnswer,
  ClientOptions,
  ClientOutputRecord,
  ClientStatusReport,
  ClientSubmitAnswer,
  IdemClient,
  RetryOptions,
} from "./create-client.js";
export { createClient } from "./create-client.js";
export type {
  FileWriteEffect,
  GitCommitEffect,
  GitPatchEffect,
  HttpRequestEffect,
  NatsPublishEffect,
} from "./effect-builders.js";
export {
  effect,
  fileWrite,
  gitCommit,
  gitPatch,
  httpRequest,
  natsPublish,
} from "./effect-builders.js";
export type { JetStreamPubAck, JetStreamPublisher } from "./jetstream-enqueue.js";
export type {
  GitHubCommentEffect,
  GitHubIssueEffect,
  GitHubPullRequestEffect,
  SlackMessageEffect,
  SqlExecEffect,
} from "./service-builders.js";
export {
  githubComment,
  githubIssue,
  githubPullRequest,
  slackMessage,
  sqlExec,
} from "./service-builders.js";
