import { type AnyEffectKind, type OpenedKind, openKind } from "@idem/kit";
import { type GitHubStandIn, startGitHubStandIn } from "@idem/testing";

/** The variable the tests' options name for the token. */
export const TOKEN_ENV = "IDEM_TEST_GITHUB_TOKEN";

/** A GitHub stand-in with the repository `acme/app` (alias `app`) and the kind's options for it. */
export interface GitHubFixture extends AsyncDisposable {
  gh: GitHubStandIn;
  options: Record<string, unknown>;
  /** The kind hosted as idem's interpreter hosts it, against the stand-in. */
  open(kind: AnyEffectKind, extra?: Record<string, unknown>): OpenedKind;
}

/**
 * Starts the stand-in (GitHub Enterprise-like under `basePath` when given; its branches those of
 * the bare repository `gitDir` when given, so a git push makes a branch there).
 */
export async function githubFixture(
  o: { basePath?: string; branches?: string[]; gitDir?: string } = {},
): Promise<GitHubFixture> {
  const gh = await startGitHubStandIn(o.basePath ? { basePath: o.basePath } : {});
  gh.createRepo(
    o.gitDir
      ? { owner: "acme", name: "app", gitDir: o.gitDir }
      : { owner: "acme", name: "app", branches: ["main", ...(o.branches ?? [])] },
  );
  const options = {
    baseUrl: gh.url,
    tokenEnv: TOKEN_ENV,
    repos: { app: { owner: "acme", name: "app" } },
  };
  const opened: OpenedKind[] = [];
  return {
    gh,
    options,
    open(kind, extra = {}) {
      const k = openKind(kind, {
        options: { ...options, ...extra },
        env: { [TOKEN_ENV]: gh.token },
      });
      opened.push(k);
      return k;
    },
    async [Symbol.asyncDispose]() {
      for (const k of opened) await k.close();
      await gh.stop();
    },
  };
}
