// @idem/stand-ins: the GitHub REST API and the Slack Web API on 127.0.0.1, for idem's tests and
// for `idem stand-in github|slack` (try a kind without the real service). See README.md.
export type { GitHubCreate } from "./github/github-answers.js";
export type { ReducedDescription } from "./github/github-description.js";
export { reduceDescription } from "./github/github-description.js";
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
