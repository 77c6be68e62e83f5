import type { DeadLetterRecord, EffectRecord, JournalStore, RunRecord } from "@idem/journal";

/** A dead run (the latest generation of an output) as `idem dlq ls` lists it. */
export interface DeadRun {
  jobId: string;
  generation: number;
  class: string | null;
  attempts: number;
  leaseExpiries: number;
  lastError: string | null;
  updatedAt: number;
  /** The effects of the dead generation that are not settled: uncertain, failed or intended. */
  effects: { key: string; kind: string; state: string; detail: Record<string, unknown> | null }[];
}

/** What waits for a human: dead runs, their uncertain effects, and open dead letters (`idem dlq ls --json`). */
export interface DeadLetterListing {
  runs: DeadRun[];
  uncertain: { key: string; jobId: string; generation: number; kind: string; detail: unknown }[];
  /** Jobs that never produced an output, not yet retried or dismissed. */
  jobs: DeadLetterRecord[];
}

const OPEN_STATES = new Set(["uncertain", "failed", "intended"]);

/**
 * Dead runs (latest generation per output, in the order the journal lists outputs) with their
 * unsettled effects, the uncertain ones among them, and the open dead letters. Read-only; journal
 * errors propagate.
 */
export async function listDeadLetters(journal: JournalStore): Promise<DeadLetterListing> {
  const runs: DeadRun[] = [];
  for (const o of await journal.outputs.list({ state: "dead" })) {
    const run = (await journal.runs.latest(o.jobId)) as RunRecord;
    const effects = (await journal.ledger.forJob(o.jobId, run.generation)).filter((e) =>
      OPEN_STATES.has(e.state),
    );
    runs.push({
      jobId: run.jobId,
      generation: run.generation,
      class: run.class,
      attempts: run.attempts,
      leaseExpiries: run.leaseExpiries,
      lastError: run.lastError,
      updatedAt: run.updatedAt,
      effects: effects.map((e: EffectRecord) => ({
        key: e.key,
        kind: e.kind,
        state: e.state,
        detail: e.detail,
      })),
    });
  }
  const uncertain = runs.flatMap((r) =>
    r.effects
      .filter((e) => e.state === "uncertain")
      .map((e) => ({
        key: e.key,
        jobId: r.jobId,
        generation: r.generation,
        kind: e.kind,
        detail: e.detail,
      })),
  );
  return { runs, uncertain, jobs: await journal.deadLetters.list({ unresolved: true }) };
}
