import { createHash, randomBytes } from "node:crypto";

/**
 * How long a console session lives from its sign-in, whatever it does: 12 hours, the absolute
 * limit OWASP ASVS 4.0 (V3.3.2, level 2) sets for re-authentication. A live page polls every few
 * seconds, so an idle limit would never be reached while it is open. docs/console.md says it.
 */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** The most sessions kept at once; the oldest goes first beyond it. */
const MAX_SESSIONS = 1000;

/** One browser's session: its CSRF token and when it ends. */
export interface Session {
  /** The random CSRF token every form of this session carries (never another session's). */
  readonly csrf: string;
  readonly expiresAt: number;
}

const random = () => randomBytes(32).toString("base64url");
/** Sessions are kept by a digest of their ID: a lookup's timing says nothing of a live ID. */
const keyOf = (id: string) => createHash("sha256").update(id, "utf8").digest("base64url");

/**
 * The console's server-side sessions: an ID (the cookie's value, 256 random bits) names a session
 * with its own random CSRF token and an absolute expiry (`SESSION_TTL_MS`). Signing out revokes
 * it here, so a copied cookie stops working at once; a restart ends every session. In memory, one
 * console process: several consoles behind one proxy each sign in on their own.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = SESSION_TTL_MS,
  ) {}

  /** A new session, and the ID its cookie carries. */
  create(): { id: string; session: Session } {
    const id = random();
    const session = { csrf: random(), expiresAt: this.now() + this.ttlMs };
    this.sessions.set(keyOf(id), session);
    while (this.sessions.size > MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value as string;
      this.sessions.delete(oldest);
    }
    return { id, session };
  }

  /** The live session of this ID, or undefined (unknown, revoked or expired: then forgotten). */
  get(id: string | undefined): Session | undefined {
    if (id === undefined || id === "") return undefined;
    const key = keyOf(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(key);
      return undefined;
    }
    return session;
  }

  /** Ends the session of this ID (sign-out); nothing for an unknown one. */
  revoke(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(keyOf(id));
  }
}
