import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { IdemError } from "@idem/schema";

/** What a crash between moving the ref and syncing the working tree left to finish. */
export interface PendingMarker {
  branch: string;
  base: string | null;
  commit: string;
  refs: string[];
  sync: boolean;
  /** The paths the commit changes and the temporary-name nonce of the in-process sync. */
  paths?: string[];
  nonce?: string;
}

/** Where the marker of a repository lives: `<gitdir>/idem/pending.json`. */
export function markerPath(gitDir: string): string {
  return join(gitDir, "idem", "pending.json");
}

/**
 * Writes the marker whole or not at all: a kill mid-write leaves the previous one, or none. One
 * writer at a time (the repo lock is held), so one temporary name will do.
 */
export function writeMarker(gitDir: string, marker: PendingMarker): void {
  const path = markerPath(gitDir);
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(marker));
  renameSync(tmp, path);
}

/**
 * The marker a killed holder left, or undefined when the last holder finished.
 * @throws IdemError INTEGRITY when it is not JSON (written whole by rename, so not a torn write:
 * the repo needs a human's look); the read error for anything but a missing file.
 */
export function readMarker(gitDir: string): PendingMarker | undefined {
  const path = markerPath(gitDir);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    // No marker: the last holder finished. Any other error (permissions, I/O) must be seen.
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  try {
    return JSON.parse(text) as PendingMarker;
  } catch (e) {
    throw new IdemError(
      "INTEGRITY",
      `${path} (what an idem that was killed mid-apply left to finish) is not JSON; inspect the repo and remove the file`,
      { cause: e, details: { path } },
    );
  }
}
