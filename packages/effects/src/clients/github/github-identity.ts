import { IdemError } from "@idem/kit";
import type { GitHubOptions } from "../../kinds/github/github-options.js";
import type { GitHubCredentials } from "./github-credentials.js";
import { type GitHubAnswer, isRateLimited } from "./github-failure.js";

/** The requests the identity check makes (the client's). */
export interface IdentityRequests {
  url(path: string): URL;
  send(
    method: "GET",
    url: URL,
    what: string,
    o?: { authorization?: string },
  ): Promise<GitHubAnswer>;
  failure(a: GitHubAnswer, what: string): IdemError;
}

/** What the identity reads of an item: its author. */
interface Authored {
  number?: number;
  user?: { login?: string; type?: string } | null;
}

/** Who the token is, and whether GitHub said so (else it is the configured `login`, unchecked yet). */
export interface GitHubWho {
  login: string;
  verified: boolean;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Who the `github.*` kinds' token is. The probes count only the items this account made, so a wrong
 * `login` makes every probe answer absent and every retry a second item; it is checked before
 * anything is made wherever GitHub can say:
 * - a GitHub App (`app`): its bot, `<slug>[bot]`, from `GET /app` with the App's JWT;
 * - a personal token: `GET /user`;
 * - an installation token from `tokenEnv` (GET /user answers 403 "Resource not accessible by
 *   integration"): the configured `login`, unchecked, until GitHub shows the author of an item
 *   idem made (`confirm`) or of one carrying an effect's key (`found`).
 * A mismatch is INVALID_CONFIG, and stays so in this process: no further item is made.
 */
export class GitHubIdentity {
  private who: Promise<GitHubWho> | undefined;
  private refuted: IdemError | undefined;

  constructor(
    private readonly client: IdentityRequests,
    private readonly options: GitHubOptions,
    private readonly credentials: GitHubCredentials,
  ) {}

  /** The token's login. @throws IdemError INVALID_CONFIG on a mismatch; UNAVAILABLE */
  resolve(): Promise<GitHubWho> {
    if (this.refuted) return Promise.reject(this.refuted);
    this.who ??= this.ask().catch((e: unknown) => {
      this.who = undefined;
      throw e;
    });
    return this.who;
  }

  private mismatch(actual: string, how: string, expected = this.options.login): IdemError {
    const said =
      this.options.login === undefined
        ? `the token's login is ${expected ?? "unknown"}`
        : `github.login is ${this.options.login}`;
    return new IdemError(
      "INVALID_CONFIG",
      `${said}, but ${how} ${actual}: set login to ${actual}`,
      {
        details: { field: "github.login", expected: expected ?? null, actual },
      },
    );
  }

  private async ask(): Promise<GitHubWho> {
    const configured = this.options.login;
    if (this.credentials.kind === "app" && this.credentials.appJwt) {
      const what = "read the GitHub App (GET /app) to name its bot";
      const a = await this.client.send("GET", this.client.url("/app"), what, {
        authorization: `Bearer ${await this.credentials.appJwt()}`,
      });
      const slug = (a.body as { slug?: unknown } | undefined)?.slug;
      if (a.status !== 200 || typeof slug !== "string" || slug === "")
        throw this.client.failure(a, what);
      const login = `${slug}[bot]`;
      if (configured !== undefined && !same(configured, login))
        throw this.mismatch(login, "the App's bot is");
      return { login, verified: true };
    }
    const what = "read the token's user (GET /user)";
    const a = await this.client.send("GET", this.client.url("/user"), what);
    const login = (a.body as { login?: unknown } | undefined)?.login;
    if (a.status === 200 && typeof login === "string" && login !== "") {
      if (configured !== undefined && !same(configured, login))
        throw this.mismatch(login, "the token is");
      return { login, verified: true };
    }
    // An installation token (an App's, or Actions' GITHUB_TOKEN) cannot read GET /user.
    if ((a.status === 403 && !isRateLimited(a)) || a.status === 404) {
      if (configured !== undefined) return { login: configured, verified: false };
      throw new IdemError(
        "INVALID_CONFIG",
        "github: GET /user does not answer for this token (an installation token): set github.login to the App's bot (my-app[bot]), or configure github.app",
        { details: { field: "github.login", status: a.status } },
      );
    }
    throw this.client.failure(a, what);
  }

  /**
   * After a create answered: the item's author must be the login. GitHub shows who the token is:
   * a match checks an unchecked login; a mismatch refutes it (the one item made stays, carrying the
   * key: after the fix a retry finds it).
   * @throws IdemError INVALID_CONFIG on a mismatch.
   */
  async confirm(item: Authored, what: string): Promise<void> {
    const by = item.user?.login;
    if (typeof by !== "string" || by === "") return;
    const who = await this.resolve();
    if (same(by, who.login)) {
      if (!who.verified) this.who = Promise.resolve({ login: who.login, verified: true });
      return;
    }
    throw this.refute(by, `GitHub made ${what} as`, who.login);
  }

  /**
   * A probe saw an item carrying the effect's key made by another account than the login. With a
   * login GitHub confirmed, or by a person, it is someone's copy and never counts; by a bot while
   * the login is unchecked, it is the token's own item under another name: INVALID_CONFIG, never
   * a second item.
   * @throws IdemError INVALID_CONFIG in that last case.
   */
  async found(item: Authored, what: string): Promise<void> {
    const by = item.user?.login;
    if (typeof by !== "string" || by === "") return;
    const bot = item.user?.type === "Bot" || /\[bot\]$/i.test(by);
    const who = await this.resolve();
    if (bot && !who.verified)
      throw this.refute(by, `${what} carries this effect's key and was made by`, who.login);
  }

  private refute(actual: string, how: string, expected: string): IdemError {
    this.refuted = this.mismatch(actual, how, expected);
    this.who = undefined;
    return this.refuted;
  }
}
