import type { GitRepos } from "@idem/git";
import type { DoctorContext, KindFinding } from "@idem/kit";
import type { AddFinding } from "./add-finding.js";
import { checkLocalRepo } from "./local-repo-doctor.js";
import { checkRemoteRepo } from "./remote-repo-doctor.js";

/**
 * `idem doctor`'s check of every configured repository, shared by the two git kinds (so run once):
 * a repository on this host (`checkLocalRepo`) or on a server (`checkRemoteRepo`). Read-only;
 * never throws.
 */
export async function gitDoctor(ctx: DoctorContext<GitRepos>): Promise<KindFinding[]> {
  const findings: KindFinding[] = [];
  const add: AddFinding = (severity, key, message, fix) =>
    findings.push({ severity, key, message, fix });
  for (const [alias, repo] of Object.entries(ctx.options)) {
    ctx.checking(`repo ${alias}`);
    if (repo.url !== undefined) await checkRemoteRepo(alias, repo, add);
    else await checkLocalRepo(alias, { ...repo, path: repo.path as string }, add);
  }
  return findings;
}
