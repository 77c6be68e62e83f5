// The GitHub and Slack stand-ins live in @idem/stand-ins (the CLI serves them too): the tests'
// imports of them from here keep working.
export type {
  ArmOptions,
  GitHubCreate,
  GitHubRequestInfo,
  GitHubRequestRecord,
  GitHubStandIn,
  GitHubViolation,
  SeedItem,
  SlackArmOptions,
  SlackCall,
  SlackDistribution,
  SlackIdentity,
  SlackMetadata,
  SlackPost,
  SlackRequestRecord,
  SlackRotation,
  SlackStandIn,
  SlackViolation,
  StandInApp,
  StandInComment,
  StandInIssue,
  StandInMessage,
  StandInPullRequest,
  StartGitHubStandInOptions,
  StartSlackStandInOptions,
} from "@idem/stand-ins";
export { startGitHubStandIn, startSlackStandIn } from "@idem/stand-ins";
export { configSection } from "./config-section.js";
export type { GitDaemonHandle } from "./git-daemon.js";
export { createBareRepo, startGitDaemon } from "./git-daemon.js";
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
export type { TempDir } from "./temp-dir.js";
export { tempDir } from "./temp-dir.js";
export type { TempJournal } from "./temp-journal.js";
export { tempJournal } from "./temp-journal.js";
