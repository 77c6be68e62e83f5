import type { JournalEvents } from "../../port/events.js";
import type { JournalLedger } from "../../port/ledger.js";
import type { JournalOutputs } from "../../port/outputs.js";
import type { JournalRuns } from "../../port/runs.js";
import { PostgresConnection, type PostgresJournalOptions } from "./connection.js";
import { postgresEvents } from "./events.js";
import { postgresLedger } from "./ledger.js";
import { postgresOutputs } from "./outputs.js";
import { postgresRuns } from "./runs.js";

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
  readonly events: JournalEvents;
  private constructor(private readonly c: PostgresConnection) {
    this.outputs = postgresOutputs(c);
    this.runs = postgresRuns(c);
    this.ledger = postgresLedger(c);
    this.events = postgresEvents(c);
  }

  /** Connects to `url` and applies pending migrations under the advisory lock. */
  static async open(url: string, options?: PostgresJournalOptions): Promise<PostgresJournalStore> {
    return new PostgresJournalStore(await PostgresConnection.open(url, options));
  }

  /** The URL without its password. */
  get location(): string {
    return this.c.location;
  }

  /** Ends the pool; idempotent. */
  async close(): Promise<void> {
    await this.c.close();
  }
}
