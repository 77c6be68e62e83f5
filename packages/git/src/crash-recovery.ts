import { promises as fs, rmSync } from "node:fs";
import { join } from "node:path";
import { unsafeRelativePath } from "@idem/kit";
import type { BranchPublisher } from "./branch-publisher.js";
import { markerPath, type PendingMarker, readMarker } from "./pending-marker.js";
import { tempName } from "./plumbing/prepared-sync.js";
import type { RepoObjects } from "./plumbing/repo-objects.js";
import type { WorktreeSync } from "./plumbing/worktree-sync.js";
import type { RepoLock } from "./repo-lock.js";

/** The parts of a repository that recovery works with. */
export interface RecoveryParts {
  objects: RepoObjects;
  worktree: WorktreeSync;
  lock: RepoLock;
  publisher: BranchPublisher;
}

/**
 * Runs under idem's repo lock, before each apply: finishes what a killed idem left. Its git
 * children held the lock too (they inherit it), so none of them is still running: the git lock
 * files its interrupted transaction or sync held are removed, temporary working tree files are
 * removed, and the index and working tree are brought forward to the commit idem made when every
 * touched path still holds the old or the new version. Idempotent.
 * @throws IdemError INTEGRITY for a marker that is not JSON.
 */
export async function recover(parts: RecoveryParts): Promise<void> {
  const { objects } = parts;
  const { gitDir, workTree } = await objects.layout();
  rmSync(join(gitDir, "idem", "apply.index.lock"), { force: true });
  const marker = readMarker(gitDir);
  if (!marker) return;
  for (const r of marker.refs) {
    if (r.startsWith("refs/")) await fs.rm(join(gitDir, `${r}.lock`), { force: true });
  }
  await fs.rm(join(gitDir, "packed-refs.lock"), { force: true });
  // Moving the checked-out branch also locks HEAD (for its reflog).
  await fs.rm(join(gitDir, "HEAD.lock"), { force: true });
  if (marker.sync) {
    await fs.rm(join(gitDir, "index.lock"), { force: true });
    if (workTree && marker.nonce && Array.isArray(marker.paths)) {
      for (const p of marker.paths) {
        if (typeof p !== "string" || unsafeRelativePath(p)) continue;
        await fs.rm(tempName(join(workTree, p), marker.nonce), { force: true }).catch(() => {});
      }
    }
    const head = await objects.head(marker.branch);
    if (head === marker.commit && (await parts.publisher.checkedOutBranch()) === marker.branch) {
      await finishSync(parts, marker);
    }
  }
  await fs.rm(markerPath(gitDir), { force: true });
}

/** Brings the index and working tree to the marker's commit: in process when it can, else git. */
async function finishSync(parts: RecoveryParts, marker: PendingMarker): Promise<void> {
  const { objects } = parts;
  let done = false;
  const paths = Array.isArray(marker.paths) ? marker.paths : undefined;
  if (
    marker.base !== null &&
    paths?.every((p) => typeof p === "string" && !unsafeRelativePath(p))
  ) {
    const baseTree = (await objects.commit(marker.base))?.tree;
    const newTree = (await objects.commit(marker.commit))?.tree;
    if (baseTree && newTree) {
      const r = await parts.worktree.prepare(baseTree, newTree, paths, true).catch(() => undefined);
      if (r?.kind === "done") done = true;
      if (r?.kind === "ready") {
        await r.sync.commit(marker.nonce ?? "recover").then(
          () => {
            done = true;
          },
          () => {},
        );
      }
    }
  }
  if (!done) {
    const matchesBase =
      marker.base === null
        ? true
        : (
            await parts.lock.git(["diff-index", "--cached", "--quiet", marker.base, "--"], {
              okCodes: [1],
            })
          ).code === 0;
    if (matchesBase) await parts.publisher.syncWorktree(marker.base, marker.commit).catch(() => {});
  }
}
