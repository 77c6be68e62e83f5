export type { CreateEffectsOptions } from "./create-effects.js";
export { createEffects, GIT_DURABLE_DEFAULT } from "./create-effects.js";
export type {
  ApplyOptions,
  ApplyOrder,
  ApplyTicket,
  EffectHandler,
  Effects,
  ProbeHint,
  ProbeOptions,
  ProbeResult,
} from "./effect-handler.js";
export { keyRef } from "./git/key-index.js";
export { parsePatchFiles } from "./git/patch/patch-paths.js";
export type { CloneProgress } from "./git/remote/remote-git.js";
export type {
  FileWriteSpec,
  GitCommitSpec,
  GitPatchSpec,
  HttpRequestSpec,
  NatsPublishSpec,
  SqlExecSpec,
} from "./kinds/index.js";
export {
  BUILT_IN_KINDS,
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
  recordedSpecsProblem,
  supersedeKeyOf,
  targetsOfEffect,
} from "./registry/check-effects.js";
export type { KindRegistry, LoadKindRegistryOptions } from "./registry/kind-registry.js";
export { kindRegistryOf, loadKindRegistry } from "./registry/kind-registry.js";
export { staticEffectIssues } from "./static-checks.js";
