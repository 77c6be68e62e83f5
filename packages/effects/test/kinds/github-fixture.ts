import { type AnyEffectKind, type EffectSpecBase, type OpenedKind, openKind } from "@idem/kit";
import { isIdemError } from "@idem/schema";
import { type GitHubStandIn, startGitHubStandIn } from "@idem/testing";
import { expect } from "vitest";

/** The variable the tests' options name for the token. */
export const TOKEN_ENV = "IDEM_TEST_GITHUB_TOKEN";

/** A GitHub stand-in with the repository `acme/app` (alias `app`) and the kind's options for it. */
export interface GitHubFixture extends AsyncDisposable {
  gh: GitHubStandIn;
  options: Record<string, unknown>;
  /** The kind hosted as idem's interpreter hosts it, against the stand-in. */
  open(kind: AnyEffectKind, extra?: Record<string, unknown>): OpenedKind;
}

/** Starts the stand-in (GitHub Enterprise-like under `basePath` when given). */
export async function githubFixture(
  o: { basePath?: string; branches?: string[] } = {},
): Promise<GitHubFixture> {
  const gh = await startGitHubStandIn(o.basePath ? { basePath: o.basePath } : {});
  gh.createRepo({ owner: "acme", name: "app", branches: ["main", ...(o.branches ?? [])] });
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

/**
 * One effect interpreted as idem does (docs/reliability.md): probe; present ends it; absent is
 * followed by apply with that probe. Answers how it ended.
 */
export async function interpret(
  k: OpenedKind,
  spec: EffectSpecBase,
  key: string,
  since: number,
): Promise<{ outcome: "present" | "applied"; detail: Record<string, unknown> }> {
  const probed = await k.probe(spec, key, { since });
  if (probed.status === "present") return { outcome: "present", detail: probed.detail };
  if (probed.status === "conflict") throw new Error(`conflict: ${probed.reason}`);
  return { outcome: "applied", detail: await k.apply(spec, key, { since, probed }) };
}

/** The error `p` rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

/** Asserts an IdemError of `code` (and its retry wait, when given, within `[min, max]` ms). */
export function expectIdemError(
  e: unknown,
  code: string,
  retryAfter?: { min: number; max: number },
): void {
  expect(isIdemError(e), String(e)).toBe(true);
  expect((e as { code: string }).code, (e as Error).message).toBe(code);
  if (retryAfter) {
    const wait = (e as { details?: { retryAfterMs?: number } }).details?.retryAfterMs;
    expect(wait).toBeGreaterThanOrEqual(retryAfter.min);
    expect(wait).toBeLessThanOrEqual(retryAfter.max);
  }
}

/** The field an INVALID_INPUT names. */
export function fieldOf(e: unknown): string | undefined {
  return (e as { details?: { field?: string } }).details?.field;
}
