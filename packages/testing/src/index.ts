export { configSection } from "./config-section.js";
export type { GitDaemonHandle } from "./git-daemon.js";
export { createBareRepo, startGitDaemon } from "./git-daemon.js";
export type { GitHubCreate } from "./github/github-answers.js";
export type { ArmOptions, GitHubRequestInfo } from "./github/github-limits.js";
export type { GitHubRequestRecord, GitHubViolation } from "./github/github-server.js";
export type {
  GitHubStandIn,
  SeedItem,
  StandInApp,
  StandInComment,
  StandInIssue,
  StandInPullRequest,
  StartGitHubStandInOptions,
} from "./github/github-stand-in.js";
export { startGitHubStandIn } from "./github/github-stand-in.js";
export type {
  NatsClusterHandle,
  NatsClusterNode,
  StartNatsClusterOptions,
} from "./nats-cluster.js";
export { startNatsCluster } from "./nats-cluster.js";
export type { NatsServerHandle, StartNatsServerOptions } from "./nats-server.js";
export { freePort, startNatsServer } from "./nats-server.js";
export type { NetnsHost, NetnsNetwork } from "./netns.js";
export { createNetnsNetwork } from "./netns.js";
export type { CheckedRequest, OpenApiChecker } from "./openapi-check.js";
export { createOpenApiChecker } from "./openapi-check.js";
export type { PgBouncerHandle, StartPgBouncerOptions } from "./pgbouncer.js";
export { PGBOUNCER, startPgBouncer } from "./pgbouncer.js";
export type { PostgresHandle, StartPostgresOptions } from "./postgres.js";
export { ignoreServerShutdown, postgresBinDir, startPostgres } from "./postgres.js";
export type { SkippingClock } from "./skipping-clock.js";
export { skippingClock } from "./skipping-clock.js";
export type { SlackRotation } from "./slack/slack-auth.js";
export type {
  SlackArmOptions,
  SlackCall,
  SlackRequestRecord,
  SlackViolation,
} from "./slack/slack-server.js";
export type {
  SlackStandIn,
  StandInMessage,
  StartSlackStandInOptions,
} from "./slack/slack-stand-in.js";
export { startSlackStandIn } from "./slack/slack-stand-in.js";
export type { SlackMetadata } from "./slack/slack-state.js";
export type { SlackDistribution } from "./slack/slack-tiers.js";
export type { SlackIdentity, SlackPost } from "./slack/slack-web-methods.js";
export type { TempDir } from "./temp-dir.js";
export { tempDir } from "./temp-dir.js";
export type { TempJournal } from "./temp-journal.js";
export { tempJournal } from "./temp-journal.js";
