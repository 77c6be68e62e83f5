export type { ApplyOrder, ApplyTicket, ProbeHint, ProbeResult } from "@idem/kit";
export type { CreateEffectsOptions } from "./create-effects.js";
export { createEffects } from "./create-effects.js";
export type { ApplyOptions, Effects, ProbeOptions } from "./effects.js";
export { EFFECT_TRAILER } from "./git/git-names.js";
export type { GitKindSettings } from "./git/git-resource.js";
export { GIT_DURABLE_DEFAULT } from "./git/git-resource.js";
export { keyRef } from "./git/key-index.js";
export { parsePatchFiles } from "./git/patch/patch-paths.js";
export type { CloneProgress } from "./git/remote/remote-git.js";
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
  recordedSpecsProblem,
  supersedeKeyOf,
  type RecordedSpecsProblem,
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
