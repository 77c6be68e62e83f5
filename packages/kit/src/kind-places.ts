/**
 * The words a kind may call its places by, each the replay filter that selects it: `idem replay
 * --repo`, `--root` and `--target` (stored in a replayed run as `repos`, `roots`, `targets`). A
 * kind picks the one that fits: a repository (git, GitHub) is a `repo`, a folder a `root`, any
 * other service (an HTTP API, a stream, a database, a channel) a `target`.
 */
export const PLACE_TYPES = ["repo", "root", "target"] as const;

/** One of PLACE_TYPES. */
export type PlaceType = (typeof PLACE_TYPES)[number];
