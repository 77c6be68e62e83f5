import { AGENT_PATTERN, JOB_ID_PATTERN } from "@idem/schema";
import { z } from "zod";

/** An attempt's name as a client gives it: a run's ID, a timestamp. */
export const ATTEMPT_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** How many superseded attempt IDs a draft remembers (a session naming one is refused). */
export const SUPERSEDED_KEPT = 50;

/**
 * A job's draft output as a store keeps it (docs/mcp.md, "Drafts and attempts"): the current
 * attempt (numbered from 1, with the client's name for it when one gave it), the effects staged
 * in it, whether `finish` ended it, and once its output is recorded the record's content hash
 * (the effects are then dropped: the journal has them).
 */
export interface DraftState {
  jobId: string;
  agent: string;
  attempt: number;
  /** The name the client gave this attempt (`--attempt`, `?attempt=`), when it gave one. */
  attemptId?: string | undefined;
  /** The names of earlier attempts, newest last (at most {@link SUPERSEDED_KEPT}). */
  superseded: string[];
  effects: Record<string, unknown>[];
  finished?: { summary?: string | undefined } | undefined;
  /** Set once the output was recorded (or found recorded as a duplicate). */
  recorded?: { contentHash: string; effects: number } | undefined;
}

/** The shape a stored draft must have: a file that is not this is refused, never staged from. */
export const DraftStateSchema = z.strictObject({
  jobId: z.string().regex(JOB_ID_PATTERN),
  agent: z.string().regex(AGENT_PATTERN),
  attempt: z.number().int().min(1),
  attemptId: z.string().regex(ATTEMPT_PATTERN).optional(),
  superseded: z.array(z.string().regex(ATTEMPT_PATTERN)).max(SUPERSEDED_KEPT),
  effects: z.array(z.record(z.string(), z.unknown())),
  finished: z.strictObject({ summary: z.string().optional() }).optional(),
  recorded: z
    .strictObject({ contentHash: z.string(), effects: z.number().int().min(0) })
    .optional(),
});

/** What a change answers: the state to store (none: nothing changes) and the caller's answer. */
export interface DraftChange<T> {
  next?: DraftState | undefined;
  answer: T;
}

/**
 * Where the drafts of jobs are kept between calls. `update` is atomic per job: the change sees
 * the state as stored and its `next` replaces it only if no other change came first; otherwise
 * the change runs again on the newer state. A change must be pure (it may run more than once).
 */
export interface DraftStore {
  read(jobId: string): Promise<DraftState | undefined>;
  update<T>(jobId: string, change: (current: DraftState | undefined) => DraftChange<T>): Promise<T>;
}

/**
 * Drafts in this process's memory: the executor's per-run draft (a run's agent reconnecting
 * finds it; a new run gets a new store, so a new attempt starts empty).
 */
export class MemoryDraftStore implements DraftStore {
  private readonly drafts = new Map<string, DraftState>();

  async read(jobId: string): Promise<DraftState | undefined> {
    return this.drafts.get(jobId);
  }

  async update<T>(
    jobId: string,
    change: (current: DraftState | undefined) => DraftChange<T>,
  ): Promise<T> {
    const r = change(this.drafts.get(jobId));
    if (r.next) this.drafts.set(jobId, r.next);
    return r.answer;
  }
}
