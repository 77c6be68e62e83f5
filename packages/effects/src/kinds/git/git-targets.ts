import { GitRepo, type GitRepoOptions, type GitRepos, repoDir, repoOf } from "@idem/git";
import { IdemError } from "@idem/kit";

/** The configured repositories by alias, each opened once. */
export class GitTargets {
  private readonly opened = new Map<string, GitRepo>();

  constructor(
    private readonly repos: GitRepos,
    private readonly options: GitRepoOptions,
  ) {}

  /** @throws IdemError UNKNOWN_ALIAS for a repo that is not configured. */
  get(alias: string): GitRepo {
    let repo = this.opened.get(alias);
    if (!repo) {
      const rc = repoOf(this.repos, alias);
      if (!rc)
        throw new IdemError("UNKNOWN_ALIAS", `unknown repo alias "${alias}"`, {
          details: { field: "repo" },
        });
      repo = new GitRepo(alias, { ...rc, path: repoDir(rc) }, this.options);
      this.opened.set(alias, repo);
    }
    return repo;
  }

  close(): void {
    for (const r of this.opened.values()) r.close();
    this.opened.clear();
  }
}
