import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GitRepos } from "@idem/git";
import { ScratchIndexes } from "@idem/git";
import type { OpenContext } from "@idem/kit";
import { GitTargets } from "./git-targets.js";

/**
 * git effects are durable unless told otherwise: chosen from BENCHMARKS.md, where a durable
 * git.commit stays above the plain `git add` + `git commit` loop run with git's own fsync.
 */
export const GIT_DURABLE_DEFAULT = true;

/** How the git kinds of one catalog treat their repositories; every field has a default. */
export interface GitKindSettings {
  /**
   * fsync the git objects and refs of an effect before apply returns (default true): the ledger,
   * fsynced too, then never says `applied` for a commit a power loss can take back. false is git's
   * own default (no fsync of loose objects or refs); see docs/reliability.md, "Power loss".
   */
  durable?: boolean;
  /** How long to wait for another process's repo lock before LOCKED (default 30 s). */
  lockTimeoutMs?: number;
  /** Keep a repo's OS lock this long after an apply so a burst pays for it once (default 200 ms). */
  lockLingerMs?: number;
}

/** What the two git kinds share in one host: the configured repositories and the scratch indexes. */
export interface GitResource {
  readonly targets: GitTargets;
  readonly scratch: ScratchIndexes;
}

/** What the two git kinds share in one host: the configured repositories and the scratch indexes. */
export interface GitResource {
  readonly targets: GitTargets;
  readonly scratch: ScratchIndexes;
}

/**
 * The repositories of this host, opened once for both git kinds (`shared`), their long-lived git
 * processes and locks released, and their scratch folder removed, when the host closes.
 */
export function openGitResource(
  ctx: OpenContext<GitRepos>,
  settings: GitKindSettings,
): GitResource {
  return ctx.shared(
    "idem.git",
    () => {
      let tmp: Promise<string> | undefined;
      const tmpDir = () => {
        tmp ??= fs.mkdtemp(join(tmpdir(), "idem-effects-"));
        return tmp;
      };
      const targets = new GitTargets(ctx.options, {
        clock: ctx.clock,
        durable: settings.durable ?? GIT_DURABLE_DEFAULT,
        lockTimeoutMs: settings.lockTimeoutMs ?? 30_000,
        lockLingerMs: settings.lockLingerMs ?? 200,
        tmpDir,
        fault: (point) => ctx.fault(point),
        onCloneProgress: (p) =>
          ctx.progress({ what: `cloning ${p.alias}`, stage: p.stage, percent: p.percent }),
      });
      const close = async () => {
        targets.close();
        const dir = await tmp?.catch(() => undefined);
        tmp = undefined;
        if (dir) await fs.rm(dir, { recursive: true, force: true });
      };
      return { targets, scratch: new ScratchIndexes(), close };
    },
    (r) => r.close(),
  );
}
