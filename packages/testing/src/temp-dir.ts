import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A temporary directory, removed (recursively) on disposal. */
export interface TempDir extends AsyncDisposable {
  readonly path: string;
  /** Removes the directory; idempotent. */
  remove(): Promise<void>;
}

/** Creates a fresh directory under the OS temp dir for `await using`. */
export async function tempDir(prefix = "idem-test-"): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  const remove = () => rm(path, { recursive: true, force: true });
  return { path, remove, [Symbol.asyncDispose]: remove };
}
