// The `repos` section of the config, owned by the two git kinds (git.commit, git.patch): its schema,
// its checks and the resolution of its paths against the config's folder.
import { isAbsolute, resolve } from "node:path";
import type { OptionsSource } from "@idem/kit";
import { ALIAS_PATTERN, aliasOf } from "@idem/schema";
import { z } from "zod";
import { isSafeBranchName, isSafeBranchPattern } from "./branch-names.js";
import { isRepoPath, repoUrlIssue } from "./repo-url.js";

const AuthorSchema = z.strictObject({
  name: z.string().min(1).default("idem"),
  email: z.string().min(1).default("idem@localhost"),
});

/**
 * `repos.<alias>`: the git repository that git effects commit to: a working tree or bare repo on
 * this host (`path`), or a repository on a server (`url`, pushed from a per-host mirror kept in
 * `cacheDir`); exactly one of `path` and `url`, `cacheDir` only beside `url`, a `url` git can
 * reach without idem holding a credential. Its default branch, the other branches agents may
 * name (names, or patterns such as `idem/*`: a branch per job), the commit author.
 */
export const RepoConfigSchema = z
  .strictObject({
    path: z.string().min(1).optional(),
    url: z.string().min(1).optional(),
    cacheDir: z.string().min(1).optional(),
    branch: z.string().min(1).default("main"),
    branches: z.array(z.string().min(1)).default([]),
    author: AuthorSchema.default({ name: "idem", email: "idem@localhost" }),
  })
  .superRefine((repo, ctx) => {
    const issue = (message: string, ...path: (string | number)[]) =>
      ctx.addIssue({ code: "custom", path, message });
    if (repo.url === undefined) {
      if (repo.path === undefined)
        issue("needs path (a repository on this host) or url (one on a server)");
      else if (repo.cacheDir !== undefined)
        issue("is the mirror of a url; a path needs none", "cacheDir");
    } else if (repo.path !== undefined) {
      issue("has both path and url; give exactly one of the two");
    } else {
      const why = repoUrlIssue(repo.url);
      if (why) issue(why, "url");
    }
    // The default branch is a name; the others may be patterns (`idem/*`: a branch per job).
    for (const [i, b] of [repo.branch, ...repo.branches].entries())
      if (i === 0 ? !isSafeBranchName(b) : !isSafeBranchPattern(b))
        issue(`"${b}" is not a safe branch name`, ...(i === 0 ? ["branch"] : ["branches", i - 1]));
  });

/** A `repos.<alias>` as written, defaults filled. */
export type RepoConfig = z.infer<typeof RepoConfigSchema>;

/** The `repos` section: the git kinds' options. */
export const GitReposSchema = z.record(
  z.string().regex(ALIAS_PATTERN, "must be an alias: letters, digits, _ and -"),
  RepoConfigSchema,
);

/** The git kinds' options: every configured repository by alias, paths absolute. */
export type GitRepos = Readonly<Record<string, RepoConfig>>;

/** Where a remote repo's mirror goes by default, relative to the config file. */
export const MIRROR_DIR = ".idem/mirrors";

/**
 * The `repos` section with every path absolute against the config's folder: `path`, a `url` that
 * is a repository path, and a remote's `cacheDir` (default `.idem/mirrors/<alias>.git`). Resolving
 * it again changes nothing.
 */
export function resolveGitRepos(repos: GitRepos, source: OptionsSource): GitRepos {
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(source.dir, p));
  return Object.fromEntries(
    Object.entries(repos).map(([alias, r]) => {
      if (r.url === undefined) return [alias, { ...r, path: abs(r.path as string) }];
      const url = isRepoPath(r.url) ? abs(r.url) : r.url;
      return [alias, { ...r, url, cacheDir: abs(r.cacheDir ?? `${MIRROR_DIR}/${alias}.git`) }];
    }),
  );
}

/** The folder idem works in for a repo: its path on this host, or a remote's mirror. */
export function repoDir(repo: RepoConfig): string {
  return (repo.url === undefined ? repo.path : repo.cacheDir) as string;
}

/** The configured repo of an alias (own keys only), or undefined. */
export function repoOf(repos: GitRepos, alias: string): RepoConfig | undefined {
  return aliasOf(repos, alias);
}
