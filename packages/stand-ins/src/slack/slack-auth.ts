/**
 * The Slack stand-in's tokens, with token rotation as Slack documents it ("Using token rotation",
 * docs.slack.dev/authentication/using-token-rotation): with rotation on, a bot token
 * (`xoxe.xoxb-...`) expires 12 hours after it was issued, on the stand-in's clock, and is then
 * answered `token_expired`; `oauth.v2.access` with `grant_type=refresh_token`, the app's client
 * ID and secret and the refresh token (`xoxe-1-...`) issues a new access token and a new refresh
 * token, and the refresh token used is revoked ("The refresh token is then revoked, and a new
 * refresh token is used to exchange the new expiring access token when it expires"). Without
 * rotation a bot token never expires.
 */
import { randomBytes } from "node:crypto";

/** How long a rotating access token lives: 12 hours (`expires_in: 43200`). */
export const ROTATING_TOKEN_SECONDS = 43_200;

/** The app's OAuth credentials, and the refresh token its installation gave. */
export interface SlackRotation {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

export class SlackAuth {
  /** Access tokens: when each expires (ms), or never; revoked ones are kept, refused. */
  private readonly tokens = new Map<string, { expiresAt?: number; revoked?: boolean }>();
  /** Refresh tokens, each usable once. */
  private readonly refreshTokens = new Map<string, { used: boolean }>();
  readonly clientId = `${randomBytes(5).readUInt32BE()}.${randomBytes(5).readUInt32BE()}`;
  readonly clientSecret = randomBytes(16).toString("hex");
  /** Tokens issued by a refresh so far. */
  refreshes = 0;

  constructor(private readonly now: () => number) {}

  /** A bot token that never expires (rotation off). */
  addToken(token: string): void {
    this.tokens.set(token, {});
  }

  /** A rotating install: an access token expiring in 12 hours and its refresh token. */
  install(): { accessToken: string; refreshToken: string } {
    return this.issue();
  }

  private issue(): { accessToken: string; refreshToken: string } {
    const accessToken = `xoxe.xoxb-1-${randomBytes(20).toString("hex")}`;
    const refreshToken = `xoxe-1-${randomBytes(20).toString("hex")}`;
    this.tokens.set(accessToken, { expiresAt: this.now() + ROTATING_TOKEN_SECONDS * 1000 });
    this.refreshTokens.set(refreshToken, { used: false });
    return { accessToken, refreshToken };
  }

  /** Whether `token` may call now: the `error` Slack answers otherwise. */
  check(token: string): "ok" | "invalid_auth" | "token_expired" | "token_revoked" {
    const t = this.tokens.get(token);
    if (!t) return "invalid_auth";
    if (t.revoked) return "token_revoked";
    if (t.expiresAt !== undefined && this.now() >= t.expiresAt) return "token_expired";
    return "ok";
  }

  /** Whether `token` is one the stand-in issued (an expired or revoked one too). */
  knows(token: string): boolean {
    return this.tokens.has(token);
  }

  revoke(token: string): void {
    const t = this.tokens.get(token);
    if (t) t.revoked = true;
  }

  /**
   * `oauth.v2.access` with `grant_type=refresh_token`: the answer Slack gives (ok with the new
   * pair, or the error).
   */
  refresh(a: {
    clientId?: string;
    clientSecret?: string;
    grantType?: string;
    refreshToken?: string;
  }): Record<string, unknown> {
    if (a.clientId !== this.clientId) return { ok: false, error: "invalid_client_id" };
    if (a.clientSecret !== this.clientSecret) return { ok: false, error: "bad_client_secret" };
    if (a.grantType !== "refresh_token") return { ok: false, error: "invalid_grant_type" };
    const r = a.refreshToken === undefined ? undefined : this.refreshTokens.get(a.refreshToken);
    if (!r || r.used) return { ok: false, error: "invalid_refresh_token" };
    r.used = true;
    this.refreshes++;
    const { accessToken, refreshToken } = this.issue();
    return {
      ok: true,
      access_token: accessToken,
      token_type: "bot",
      scope: "chat:write,channels:history,groups:history",
      refresh_token: refreshToken,
      expires_in: ROTATING_TOKEN_SECONDS,
    };
  }
}
