import { type AnyEffectKind, type OpenedKind, openKind } from "@idem/kit";
import {
  type GitHubStandIn,
  type SkippingClock,
  type StartGitHubStandInOptions,
  skippingClock,
  startGitHubStandIn,
} from "@idem/testing";

/** The variable the tests' options name for the token. */
export const TOKEN_ENV = "IDEM_TEST_GITHUB_TOKEN";

/** A GitHub stand-in with the repository `acme/app` (alias `app`) and the kind's options for it. */
export interface GitHubFixture extends AsyncDisposable {
  gh: GitHubStandIn;
  options: Record<string, unknown>;
  /** The clock the stand-in and the kinds share: a wait (a rate limit, a lag) skips ahead. */
  clock: SkippingClock;
  /** The environment the kinds read their credentials from (a test may change it). */
  env: Record<string, string | undefined>;
  /** The kind hosted as idem's interpreter hosts it, against the stand-in. */
  open(kind: AnyEffectKind, extra?: Record<string, unknown>): OpenedKind;
}

/**
 * Starts the stand-in (GitHub Enterprise-like under `basePath` when given; its branches those of
 * the bare repository `gitDir` when given, so a git push makes a branch there).
 */
export async function githubFixture(
  o: { basePath?: string; branches?: string[]; gitDir?: string } & Pick<
    StartGitHubStandInOptions,
    "listLagMs" | "pushLagMs"
  > = {},
): Promise<GitHubFixture> {
  const clock = skippingClock();
  const gh = await startGitHubStandIn({
    now: () => clock.now(),
    ...(o.basePath ? { basePath: o.basePath } : {}),
    ...(o.listLagMs === undefined ? {} : { listLagMs: o.listLagMs }),
    ...(o.pushLagMs === undefined ? {} : { pushLagMs: o.pushLagMs }),
  });
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
  const env: Record<string, string | undefined> = { [TOKEN_ENV]: gh.token };
  const opened: OpenedKind[] = [];
  return {
    gh,
    options,
    clock,
    env,
    open(kind, extra = {}) {
      const k = openKind(kind, { options: { ...options, ...extra }, env, clock });
      opened.push(k);
      return k;
    },
    async [Symbol.asyncDispose]() {
      for (const k of opened) await k.close();
      await gh.stop();
    },
  };
}
