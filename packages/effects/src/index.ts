export type { CloneProgress } from "@idem/git";
export { EFFECT_TRAILER, keyRef, parsePatchFiles } from "@idem/git";
export type { ApplyOrder, ApplyTicket, ProbeHint, ProbeResult } from "@idem/kit";
export type { CreateEffectsOptions } from "./create-effects.js";
export { createEffects } from "./create-effects.js";
export type { ApplyOptions, Effects, ProbeOptions } from "./effects.js";
export type { GitKindSettings } from "./kinds/git/git-resource.js";
export { GIT_DURABLE_DEFAULT } from "./kinds/git/git-resource.js";
export type {
  BuiltInKindParts,
  FileWriteSpec,
  GitCommitSpec,
  GitPatchSpec,
  HttpRequestSpec,
  NatsPublishSpec,
  SqlExecSpec,
} from "./kinds/index.js";
export {
  BUILT_IN_KINDS,
  builtInKinds,
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
} from "./kinds/index.js";
export type { ApprovalNoticeFacts } from "./kinds/slack-message/approval-notice.js";
export {
  APPROVAL_NOTICE_EFFECTS,
  slackApprovalNotice,
} from "./kinds/slack-message/approval-notice.js";
export type {
  PublishTransport,
  TransportMessage,
  TransportPubAck,
  TransportStreamCheck,
} from "./publish-transport.js";
export {
  aliasesOfEffect,
  checkEffects,
  describeEffect,
  effectTargetsOf,
  kindOf,
  knownAliasesOf,
  knownAliasesOfKind,
  type RecordedSpecsProblem,
  recordedSpecsProblem,
  supersedeKeyOf,
  targetsOfEffect,
} from "./registry/check-effects.js";
export type { KindRegistry, LoadKindRegistryOptions } from "./registry/kind-registry.js";
export {
  kindRegistryOf,
  kindSectionIssues,
  kindSectionNames,
  loadKindRegistry,
} from "./registry/kind-registry.js";
export { staticEffectIssues } from "./static-checks.js";
