// Builders of the effects of idem's own kinds, as an agent sends them (docs/agents.md). The client
// ships alone, so the shapes are written here; test/docs/client-builders.test.ts checks each
// builder's effect against the kind's own schema, so the two never drift apart.

type Args<T> = Omit<T, "kind">;

/** `git.commit`: whole files (`content`) or removals (`delete: true`) committed onto a branch. */
export type GitCommitEffect = {
  kind: "git.commit";
  repo: string;
  branch?: string;
  message: string;
  files: ({ path: string; content: string } | { path: string; delete: true })[];
};
/** `git.patch`: a unified text diff applied and committed. */
export type GitPatchEffect = {
  kind: "git.patch";
  repo: string;
  branch?: string;
  message: string;
  patch: string;
};
/** `file.write`: the whole content of one file under a root alias. */
export type FileWriteEffect = {
  kind: "file.write";
  root: string;
  path: string;
  content: string;
  encoding?: "utf8" | "base64";
};
/** `nats.publish`: one JSON message on the target's subject. */
export type NatsPublishEffect = {
  kind: "nats.publish";
  target: string;
  subject: string;
  data: unknown;
  headers?: Record<string, string>;
};
/** `http.request`: one request to a path under the target's base URL. */
export type HttpRequestEffect = {
  kind: "http.request";
  target: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
};

/**
 * A `git.commit` effect: whole files (`content`) or removals (`delete: true`) committed onto the
 * repo alias's branch. Pure; the executor validates it when the output is submitted.
 */
export function gitCommit(args: Args<GitCommitEffect>): GitCommitEffect {
  return { kind: "git.commit", ...args };
}

/** A `git.patch` effect: a unified diff applied and committed. Pure. */
export function gitPatch(args: Args<GitPatchEffect>): GitPatchEffect {
  return { kind: "git.patch", ...args };
}

/** A `file.write` effect: the whole content of one file under a root alias. Pure. */
export function fileWrite(args: Args<FileWriteEffect>): FileWriteEffect {
  return { kind: "file.write", ...args };
}

/** A `nats.publish` effect: one message on the target's subject (deduplicated by effect key). Pure. */
export function natsPublish(args: Args<NatsPublishEffect>): NatsPublishEffect {
  return { kind: "nats.publish", ...args };
}

/**
 * An `http.request` effect: one request to a path under the target's base URL, sent with the
 * effect key as `Idempotency-Key`. Pure.
 */
export function httpRequest(args: Args<HttpRequestEffect>): HttpRequestEffect {
  return { kind: "http.request", ...args };
}

/**
 * An effect of any registered kind, a kind of the config's own included (`acme.ticket`): its
 * fields as that kind's schema takes them (`idem kinds --json` lists each kind's JSON Schema).
 */
export function effect<K extends string>(
  kind: K,
  fields: Record<string, unknown>,
): { kind: K } & Record<string, unknown> {
  return { ...fields, kind };
}
