import type { Logger } from "@idem/runtime";

/** How many Streamable HTTP sessions an endpoint keeps, and for how long (docs/mcp.md). */
export interface SessionLimits {
  /** Open sessions at most, all clients together (default 100). */
  maxSessions: number;
  /** Open sessions at most of one client: one address with one credential (default 20). */
  maxPerClient: number;
  /** A session unused this long is ended (default 5 minutes). */
  idleMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxSessions: 100,
  maxPerClient: 20,
  idleMs: 300_000,
};

/** What the registry knows of one open session. */
export interface RegisteredSession {
  /** Who opened it: its address and credential (see {@link SessionLimits.maxPerClient}). */
  readonly client: string;
  /** Whether a call is in flight: such a session is never ended to make room. */
  busy(): boolean;
  close(): Promise<void>;
}

interface Entry<S> {
  session: S;
  lastUsed: number;
}

/**
 * The open sessions of an endpoint, least recently used first. A session ends when its client
 * ends it, when it has been idle `idleMs` (checked on every new session and every minute), or to
 * make room: a new session of a client at its `maxPerClient` ends that client's least recently
 * used one, and one beyond `maxSessions` ends the least recently used of all. Nothing a session
 * staged is lost with it (drafts live in their store), so ending one costs its client only a new
 * `initialize` (HTTP 404 tells it so); a client is refused (503) only when every open session has
 * a call in flight. No client can hold the endpoint: the sessions it opens push out its own first.
 */
export class SessionRegistry<S extends RegisteredSession> {
  private readonly open = new Map<string, Entry<S>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly limits: SessionLimits,
    private readonly logger?: Logger | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.reap(), Math.min(limits.idleMs, 60_000));
    this.timer.unref();
  }

  get size(): number {
    return this.open.size;
  }

  /** The session of `id`, marked used now (it moves to the most recently used end). */
  use(id: string): S | undefined {
    const e = this.open.get(id);
    if (!e) return undefined;
    this.open.delete(id);
    e.lastUsed = this.now();
    this.open.set(id, e);
    return e.session;
  }

  add(id: string, session: S): void {
    this.open.set(id, { session, lastUsed: this.now() });
  }

  /** Forgets `id` without closing it (its transport closed). */
  forget(id: string): void {
    this.open.delete(id);
  }

  /** Ends the session `id`. */
  async end(id: string, why?: string): Promise<void> {
    const e = this.open.get(id);
    this.open.delete(id);
    if (!e) return;
    if (why) this.logger?.info({ session: id, client: e.session.client, why }, "MCP session ended");
    await e.session.close().catch(() => {});
  }

  /** Ends every session idle for `idleMs` or longer (none with a call in flight). */
  async reap(): Promise<void> {
    const cutoff = this.now() - this.limits.idleMs;
    for (const [id, e] of [...this.open])
      if (e.lastUsed <= cutoff && !e.session.busy()) await this.end(id, "idle");
  }

  /**
   * Makes room for a new session of `client` (see the class): answers false when it cannot, every
   * session that would have to end having a call in flight.
   */
  async makeRoom(client: string): Promise<boolean> {
    await this.reap();
    const own = [...this.open].filter(([, e]) => e.session.client === client);
    if (own.length >= this.limits.maxPerClient && !(await this.evict(own, "client's oldest")))
      return false;
    if (this.open.size >= this.limits.maxSessions && !(await this.evict([...this.open], "oldest")))
      return false;
    return true;
  }

  private async evict(candidates: [string, Entry<S>][], why: string): Promise<boolean> {
    const idle = candidates.find(([, e]) => !e.session.busy());
    if (!idle) return false;
    await this.end(idle[0], `evicted (${why} of the open sessions)`);
    return true;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.open.keys()].map((id) => this.end(id)));
  }
}
