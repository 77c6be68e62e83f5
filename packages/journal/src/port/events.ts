/** One entry of the append-only event log. */
export interface EventRecord {
  id: number;
  at: number;
  jobId: string | null;
  /** One of `JOURNAL_EVENTS`, or an app's own type. */
  type: string;
  data: Record<string, unknown> | null;
  actor: string;
}

/** An event to append: the job it is about (none for the journal's own), its type, data and actor. */
export interface NewEvent {
  jobId: string | null;
  /** One of `JOURNAL_EVENTS`, or an app's own type. */
  type: string;
  data?: Record<string, unknown>;
  actor: string;
}

/** The append-only event log. */
export interface JournalEvents {
  /** Appends an event; concurrent appends share one commit and fsync with records. */
  append(event: NewEvent): Promise<void>;
  /** Events in the order written, filtered by job, time and type. */
  list(filter?: {
    jobId?: string;
    since?: number;
    type?: string;
    limit?: number;
  }): Promise<EventRecord[]>;
  /** Counts events by type (audit: redeliveries skipped, conflicts refused). */
  count(types: readonly string[], since?: number): Promise<Record<string, number>>;
}
