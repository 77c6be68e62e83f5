/**
 * The GitHub stand-in's credentials: personal tokens (a user's, never expiring), GitHub Apps with
 * their RSA key pair, their installations, and the installation tokens an App mints with a JWT,
 * each expiring an hour after it was made on the stand-in's clock, as GitHub documents:
 * - "Generating a JSON Web Token (JWT) for a GitHub App": RS256, `iss` the App's ID (or client
 *   ID), `iat` in the past, `exp` at most 10 minutes ahead; GitHub's answers to a JWT its clock
 *   refuses are the messages @octokit/auth-app reads to correct its clock;
 * - "Generating an installation access token for a GitHub App": `POST
 *   /app/installations/{id}/access_tokens`, the token expires after one hour;
 * - "Authenticating as a GitHub App installation": the App acts as its bot, `<slug>[bot]`.
 */
import { createVerify, generateKeyPairSync, type KeyObject, randomBytes } from "node:crypto";
import type { GitHubState, UserRecord } from "./github-state.js";

/** A GitHub App of the stand-in. */
export interface AppRecord {
  id: number;
  slug: string;
  name: string;
  clientId: string;
  owner: UserRecord;
  publicKey: KeyObject;
  createdAt: number;
}

/** An App's installation on an account (its repositories all granted). */
export interface InstallationRecord {
  id: number;
  app: AppRecord;
  account: UserRecord;
}

/** What a token stands for. */
export interface TokenRecord {
  login: string;
  kind: "user" | "installation";
  /** When it stops working (ms, the stand-in's clock); a personal token never does. */
  expiresAt?: number;
  installation?: InstallationRecord;
}

/** GitHub's refusals of a JWT, by reason (the texts clients match on). */
export const JWT_REFUSALS = {
  undecodable: "A JSON web token could not be decoded",
  expired:
    "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
  tooFar: "'Expiration time' claim ('exp') is too far in the future",
  issuedLater:
    "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
} as const;

/** How long an installation token lives: one hour. */
export const INSTALLATION_TOKEN_MS = 3_600_000;

const b64url = (s: string) => Buffer.from(s, "base64url");

/** The stand-in's tokens, Apps and installations; every method is synchronous. */
export class GitHubAuth {
  readonly tokens = new Map<string, TokenRecord>();
  readonly apps = new Map<number, AppRecord>();
  readonly installations = new Map<number, InstallationRecord>();
  /** Installation tokens minted so far. */
  minted = 0;
  private nextId = { app: 904_001, installation: 47_000_001 };

  constructor(
    private readonly now: () => number,
    private readonly user: (login: string) => UserRecord,
  ) {}

  /** Creates an App (its bot user too) and answers it with its private key (PKCS#8 PEM). */
  createApp(o: { slug: string; name?: string; owner: string }): {
    app: AppRecord;
    privateKey: string;
  } {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const id = this.nextId.app++;
    const app: AppRecord = {
      id,
      slug: o.slug,
      name: o.name ?? o.slug,
      clientId: `Iv23li${randomBytes(7).toString("hex")}`,
      owner: this.user(o.owner),
      publicKey,
      createdAt: Math.floor(this.now() / 1000) * 1000,
    };
    this.apps.set(id, app);
    this.user(`${o.slug}[bot]`);
    return { app, privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
  }

  /** Installs `app` on `account`; answers the installation. */
  install(app: AppRecord, account: string): InstallationRecord {
    const inst = { id: this.nextId.installation++, app, account: this.user(account) };
    this.installations.set(inst.id, inst);
    return inst;
  }

  /**
   * The App a JWT proves, or why GitHub refuses it (401): undecodable, a signature or `iss` no App
   * of the stand-in matches, or times the stand-in's clock refuses.
   */
  verifyJwt(jwt: string): { app: AppRecord } | { refused: string } {
    const parts = jwt.split(".");
    if (parts.length !== 3) return { refused: JWT_REFUSALS.undecodable };
    const [head, body, sig] = parts as [string, string, string];
    let header: { alg?: unknown };
    let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
    try {
      header = JSON.parse(b64url(head).toString("utf8"));
      claims = JSON.parse(b64url(body).toString("utf8"));
    } catch {
      return { refused: JWT_REFUSALS.undecodable };
    }
    const app = [...this.apps.values()].find(
      (a) => String(a.id) === String(claims.iss) || a.clientId === claims.iss,
    );
    if (header.alg !== "RS256" || !app) return { refused: JWT_REFUSALS.undecodable };
    const ok = createVerify("RSA-SHA256")
      .update(`${head}.${body}`)
      .verify(app.publicKey, b64url(sig));
    if (!ok) return { refused: JWT_REFUSALS.undecodable };
    const now = Math.floor(this.now() / 1000);
    if (typeof claims.iat !== "number" || claims.iat > now + 60)
      return { refused: JWT_REFUSALS.issuedLater };
    if (typeof claims.exp !== "number" || claims.exp <= now)
      return { refused: JWT_REFUSALS.expired };
    if (claims.exp > now + 600 + 60) return { refused: JWT_REFUSALS.tooFar };
    return { app };
  }

  /** A new installation token for `inst`, an hour from now. */
  mint(inst: InstallationRecord): { token: string; expiresAt: number } {
    const token = `ghs_${randomBytes(18).toString("hex")}`;
    const expiresAt = Math.floor((this.now() + INSTALLATION_TOKEN_MS) / 1000) * 1000;
    this.tokens.set(token, {
      login: `${inst.app.slug}[bot]`,
      kind: "installation",
      expiresAt,
      installation: inst,
    });
    this.minted++;
    return { token, expiresAt };
  }

  /** What `token` stands for now; undefined when unknown, expired or revoked ("Bad credentials"). */
  lookup(token: string): TokenRecord | undefined {
    const t = this.tokens.get(token);
    if (!t || (t.expiresAt !== undefined && this.now() >= t.expiresAt)) return undefined;
    return t;
  }

  /** Revokes a token at once (as `DELETE /installation/token`, or a person revoking a PAT). */
  revoke(token: string): void {
    const t = this.tokens.get(token);
    if (t) t.expiresAt = 0;
  }
}

/**
 * Who a request's token is: an App (its JWT, on the App's own endpoints) or a token's account.
 * A refusal carries a `violation` when the client is at fault (a token or JWT the stand-in never
 * made); a token that expired or was revoked, or a JWT whose times the stand-in's clock refuses,
 * is GitHub doing its job, which a client handles (renews, corrects its clock).
 */
export function authenticate(
  auth: GitHubAuth,
  state: GitHubState,
  token: string,
  template: string,
):
  | { user: UserRecord; granted?: TokenRecord; app?: AppRecord }
  | { status: number; message: string; violation?: string; jwt?: boolean } {
  if (template === "/app" || template.startsWith("/app/")) {
    const v = auth.verifyJwt(token);
    if ("refused" in v) {
      const undecodable = v.refused === JWT_REFUSALS.undecodable;
      return {
        status: 401,
        message: v.refused,
        jwt: true,
        ...(undecodable ? { violation: `a JWT the stand-in refuses: ${v.refused}` } : {}),
      };
    }
    return { user: state.user(`${v.app.slug}[bot]`), app: v.app };
  }
  const granted = auth.lookup(token);
  if (granted) return { user: state.user(granted.login), granted };
  if (!auth.tokens.has(token))
    return {
      status: 401,
      message: "Bad credentials",
      violation: "a token the stand-in does not know",
    };
  return { status: 401, message: "Bad credentials" };
}
