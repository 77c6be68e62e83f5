import type {
  FileWriteSpec,
  GitCommitSpec,
  GitPatchSpec,
  HttpRequestSpec,
  NatsPublishSpec,
} from "@idem/schema";

type Args<T> = Omit<T, "kind">;

/**
 * A `git.commit` effect: whole files (`content`) or removals (`delete: true`) committed onto the
 * repo alias's branch. Pure; the executor validates it when the output is submitted.
 */
export function gitCommit(args: Args<GitCommitSpec>): GitCommitSpec {
  return { kind: "git.commit", ...args };
}

/** A `git.patch` effect: a unified diff applied and committed. Pure. */
export function gitPatch(args: Args<GitPatchSpec>): GitPatchSpec {
  return { kind: "git.patch", ...args };
}

/** A `file.write` effect: the whole content of one file under a root alias. Pure. */
export function fileWrite(args: Args<FileWriteSpec>): FileWriteSpec {
  return { kind: "file.write", ...args };
}

/** A `nats.publish` effect: one message on the target's subject (deduplicated by effect key). Pure. */
export function natsPublish(args: Args<NatsPublishSpec>): NatsPublishSpec {
  return { kind: "nats.publish", ...args };
}

/**
 * An `http.request` effect: one request to a path under the target's base URL, sent with the
 * effect key as `Idempotency-Key`. Pure.
 */
export function httpRequest(args: Args<HttpRequestSpec>): HttpRequestSpec {
  return { kind: "http.request", ...args };
}
