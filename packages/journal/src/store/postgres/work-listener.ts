import type pg from "pg";
import type { JournalWakeUps, WorkKind } from "../../port/work.js";
import { KEEPALIVE } from "./connection.js";
import { WORK_CHANNEL } from "./notify.js";
import { loadPg } from "./pg-driver.js";

const KINDS: readonly WorkKind[] = ["runs", "jobs"];
/** The waits between attempts to get the listening connection back after the server went away. */
const RECONNECT_MS = [100, 250, 500, 1000, 2000, 5000] as const;

/**
 * LISTEN on the journal's work channel over one dedicated connection (not the pool's: a pooled
 * client is handed to transactions), started by the first wait. A notification wakes every
 * waiter of its kind; one arriving while nobody of that kind waits is kept, so the next wait of
 * that kind returns at once (a claim loop busy when the row committed does not sleep past it).
 * Each time it starts listening (the first wait, or a reconnect with backoff after a server
 * restart) it wakes every waiter, since what committed before was announced to nobody; while it
 * is not listening, waits fall back to their `ms`.
 */
export class WorkListener implements JournalWakeUps {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly waiters = new Map<WorkKind, Set<() => void>>(KINDS.map((k) => [k, new Set()]));
  private readonly pending = new Set<WorkKind>();

  constructor(private readonly url: string) {}

  waitForWork(kind: WorkKind, ms: number, signal?: AbortSignal): Promise<void> {
    this.start();
    if (this.pending.delete(kind) || signal?.aborted || this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const set = this.waiters.get(kind) as Set<() => void>;
      const done = () => {
        clearTimeout(timeout);
        signal?.removeEventListener("abort", done);
        set.delete(done);
        resolve();
      };
      const timeout = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      set.add(done);
    });
  }

  /** Ends the listening connection and wakes every waiter; idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.wakeAll();
    const client = this.client;
    this.client = undefined;
    await this.connecting;
    await client?.end().catch(() => {});
  }

  private start(): void {
    if (this.closed || this.client !== undefined || this.connecting !== undefined) return;
    if (this.timer !== undefined) return;
    this.connecting = this.connect().finally(() => {
      this.connecting = undefined;
    });
  }

  private async connect(): Promise<void> {
    const { Client } = await loadPg();
    const client = new Client({ connectionString: this.url, ...KEEPALIVE });
    // A lost connection is an 'error' and then an 'end': both end in one reconnect.
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    client.on("notification", (n) => {
      if (n.channel === WORK_CHANNEL) this.wake(n.payload as WorkKind);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WORK_CHANNEL}`);
    } catch {
      // The server is not there (yet): try again later; waits keep their poll fallback meanwhile.
      await client.end().catch(() => {});
      this.retryLater();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    // Work committed before this connection listened (the first wait's own race, or a restart)
    // was announced to nobody: every waiter claims once more.
    this.wakeAll();
    this.failures = 0;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    if (!this.closed) this.retryLater();
  }

  private retryLater(): void {
    if (this.closed || this.timer !== undefined) return;
    const wait = RECONNECT_MS[Math.min(this.failures, RECONNECT_MS.length - 1)];
    this.failures += 1;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, wait);
    this.timer.unref();
  }

  private wake(kind: WorkKind): void {
    const set = this.waiters.get(kind);
    if (set === undefined) return;
    if (set.size === 0) {
      this.pending.add(kind);
      return;
    }
    for (const done of [...set]) done();
  }

  private wakeAll(): void {
    for (const kind of KINDS) this.wake(kind);
  }
}
