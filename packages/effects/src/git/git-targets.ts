import { aliasOf, type Config, IdemError } from "@idem/schema";
import { GitRepo, type GitRepoOptions } from "./git-repo.js";

/** The configured repositories by alias, each opened once. */
export class GitTargets {
  private readonly repos = new Map<string, GitRepo>();

  constructor(
    private readonly config: Config,
    private readonly options: GitRepoOptions,
  ) {}

  /** @throws IdemError UNKNOWN_ALIAS for a repo that is not configured. */
  get(alias: string): GitRepo {
    let repo = this.repos.get(alias);
    if (!repo) {
      const rc = aliasOf(this.config.repos, alias);
      if (!rc)
        throw new IdemError("UNKNOWN_ALIAS", `unknown repo alias "${alias}"`, {
          details: { field: "repo" },
        });
      repo = new GitRepo(alias, rc, this.options);
      this.repos.set(alias, repo);
    }
    return repo;
  }

  close(): void {
    for (const r of this.repos.values()) r.close();
    this.repos.clear();
  }
}
