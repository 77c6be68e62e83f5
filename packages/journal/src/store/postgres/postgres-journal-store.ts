import type { IdemError } from "@idem/schema";
import type { JournalStore } from "../../journal-store.js";
import type { ActivityWindow, JournalActivity } from "../../port/activity.js";
import type { JournalApprovals } from "../../port/approvals.js";
import type { JournalDeadLetters } from "../../port/dead-letters.js";
import type { JournalEvents } from "../../port/events.js";
import type { JournalJobs } from "../../port/jobs.js";
import type { JournalLedger } from "../../port/ledger.js";
import type { JournalMaintenance } from "../../port/maintenance.js";
import type { JournalOutputs } from "../../port/outputs.js";
import type { JournalRuns } from "../../port/runs.js";
import type { JournalStatus } from "../../port/status.js";
import type { WorkKind } from "../../port/work.js";
import { postgresApprovals } from "./approvals.js";
import { PostgresConnection, type PostgresJournalOptions } from "./connection.js";
import { postgresDeadLetters } from "./dead-letters.js";
import { postgresEvents } from "./events.js";
import { postgresJobs } from "./jobs.js";
import { postgresLedger } from "./ledger.js";
import { postgresMaintenance } from "./maintenance.js";
import { postgresOutputs } from "./outputs.js";
import { postgresRuns } from "./runs.js";
import { readActivity, readStatus } from "./status.js";
import { WorkListener } from "./work-listener.js";

export type { PostgresJournalOptions } from "./connection.js";

/**
 * The PostgreSQL adapter of the JournalStore port (node-postgres): one pool shared by one module
 * per concern, the same namespaces as the SQLite adapter, and wake-ups by LISTEN/NOTIFY.
 */
export class PostgresJournalStore implements JournalStore {
  /** Never set: a commit PostgreSQL answered is durable by the server; errors propagate per call. */
  readonly failure: IdemError | undefined = undefined;
  readonly outputs: JournalOutputs;
  readonly runs: JournalRuns;
  readonly ledger: JournalLedger;
  readonly jobs: JournalJobs;
  readonly deadLetters: JournalDeadLetters;
  readonly events: JournalEvents;
  readonly approvals: JournalApprovals;
  readonly maintenance: JournalMaintenance;
  private readonly listener: WorkListener;
  private constructor(
    private readonly c: PostgresConnection,
    url: string,
  ) {
    this.listener = new WorkListener(url);
    this.outputs = postgresOutputs(c);
    this.runs = postgresRuns(c);
    this.ledger = postgresLedger(c);
    this.jobs = postgresJobs(c);
    this.deadLetters = postgresDeadLetters(c);
    this.events = postgresEvents(c);
    this.approvals = postgresApprovals(c);
    this.maintenance = postgresMaintenance(c);
  }

  /** Connects to `url` and applies pending migrations under the advisory lock. */
  static async open(url: string, options?: PostgresJournalOptions): Promise<PostgresJournalStore> {
    return new PostgresJournalStore(await PostgresConnection.open(url, options), url);
  }

  /** The URL without its password. */
  get location(): string {
    return this.c.location;
  }

  /** Counts of outputs, latest runs, effects, rejections, open dead letters and jobs by state. */
  async status(): Promise<JournalStatus> {
    return readStatus(this.c);
  }

  /** Outputs recorded and effects applied per bucket of a window (see `JournalStore.activity`). */
  async activity(window: ActivityWindow): Promise<JournalActivity> {
    return readActivity(this.c, window);
  }

  /**
   * Resolves on a NOTIFY of `kind` from any process sharing the database (a record or replay:
   * `runs`; an enqueue or dead-letter retry: `jobs`), after `ms` at the latest, or on `signal`.
   */
  waitForWork(kind: WorkKind, ms: number, signal?: AbortSignal): Promise<void> {
    return this.listener.waitForWork(kind, ms, signal);
  }

  /** Ends the listening connection and the pool; idempotent. */
  async close(): Promise<void> {
    await this.listener.close();
    await this.c.close();
  }
}
