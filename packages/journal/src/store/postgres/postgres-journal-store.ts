import type { JournalDeadLetters } from "../../port/dead-letters.js";
import type { JournalEvents } from "../../port/events.js";
import type { JournalJobs } from "../../port/jobs.js";
import type { JournalLedger } from "../../port/ledger.js";
import type { JournalMaintenance } from "../../port/maintenance.js";
import type { JournalOutputs } from "../../port/outputs.js";
import type { JournalRuns } from "../../port/runs.js";
import type { JournalStatus } from "../../port/status.js";
import { PostgresConnection, type PostgresJournalOptions } from "./connection.js";
import { postgresDeadLetters } from "./dead-letters.js";
import { postgresEvents } from "./events.js";
import { postgresJobs } from "./jobs.js";
import { postgresLedger } from "./ledger.js";
import { postgresMaintenance } from "./maintenance.js";
import { postgresOutputs } from "./outputs.js";
import { postgresRuns } from "./runs.js";
import { readStatus } from "./status.js";

export type { PostgresJournalOptions } from "./connection.js";

/**
 * The PostgreSQL journal, being built (issue 18): the concerns written so far, each filling the
 * same port namespace as the SQLite adapter. Not exported from the package index until it fills
 * the whole `JournalStore`.
 */
export class PostgresJournalStore {
  readonly outputs: JournalOutputs;
  readonly runs: JournalRuns;
  readonly ledger: JournalLedger;
  readonly jobs: JournalJobs;
  readonly deadLetters: JournalDeadLetters;
  readonly events: JournalEvents;
  readonly maintenance: JournalMaintenance;
  private constructor(private readonly c: PostgresConnection) {
    this.outputs = postgresOutputs(c);
    this.runs = postgresRuns(c);
    this.ledger = postgresLedger(c);
    this.jobs = postgresJobs(c);
    this.deadLetters = postgresDeadLetters(c);
    this.events = postgresEvents(c);
    this.maintenance = postgresMaintenance(c);
  }

  /** Connects to `url` and applies pending migrations under the advisory lock. */
  static async open(url: string, options?: PostgresJournalOptions): Promise<PostgresJournalStore> {
    return new PostgresJournalStore(await PostgresConnection.open(url, options));
  }

  /** The URL without its password. */
  get location(): string {
    return this.c.location;
  }

  /** Counts of outputs, latest runs, effects, rejections, open dead letters and jobs by state. */
  async status(): Promise<JournalStatus> {
    return readStatus(this.c);
  }

  /** Ends the pool; idempotent. */
  async close(): Promise<void> {
    await this.c.close();
  }
}
