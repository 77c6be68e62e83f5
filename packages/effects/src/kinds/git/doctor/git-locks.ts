import { join } from "node:path";
import { type GitRepos, repoDir } from "@idem/git";
import type { KindContext, KindLock } from "@idem/kit";
import { git } from "./local-repo-doctor.js";

/**
 * The lock of each configured repository (`<git dir>/idem/lock`, the flock(2) file idem's
 * interpreters take before an apply there; a remote's is its mirror's), for `idem status` and
 * `idem doctor` to name a process that froze holding it. A repository git cannot read is left out
 * (doctor says why). Never throws.
 */
export async function gitLocks(ctx: KindContext<GitRepos>): Promise<KindLock[]> {
  const out: KindLock[] = [];
  for (const [alias, repo] of Object.entries(ctx.options)) {
    try {
      const r = await git(repoDir(repo), ["rev-parse", "--absolute-git-dir"]);
      if (r.code !== 0) continue;
      out.push({
        key: `repos.${alias}`,
        what: `repo ${alias}`,
        file: join(r.stdout.trim(), "idem", "lock"),
      });
    } catch {
      // git cannot run: doctor's check of the repository says so.
    }
  }
  return out;
}
