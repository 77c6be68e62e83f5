import type { AgentOutput, FailureClass, IdemError, Job } from "@idem/schema";

/** Where an output came from: the executor's own agent run, the HTTP API, NATS submit or the CLI. */
export type OutputSource = "executor" | "http" | "nats" | "cli" | (string & {});

export const RUN_STATES = ["pending", "running", "failed", "done", "dead"] as const;
export type RunState = (typeof RUN_STATES)[number];
export const EFFECT_STATES = [
  "intended",
  "applied",
  "present",
  "failed",
  "uncertain",
  "skipped",
] as const;
export type EffectState = (typeof EFFECT_STATES)[number];
/** Settled effect states: nothing more to do in this generation. */
export const SETTLED_EFFECT_STATES: readonly EffectState[] = ["applied", "present", "skipped"];
export const JOB_STATES = ["queued", "running", "done", "dead"] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface OutputRecord {
  seq: number;
  jobId: string;
  agent: string;
  contentHash: string;
  output: AgentOutput;
  source: OutputSource;
  recordedAt: number;
}

export interface OutputSummary {
  seq: number;
  jobId: string;
  agent: string;
  effects: number;
  recordedAt: number;
  /** The latest run's generation and state. */
  generation: number;
  state: RunState;
}

export type RecordResult =
  | { status: "recorded"; jobId: string; seq: number; contentHash: string }
  | { status: "duplicate"; jobId: string; seq: number; contentHash: string }
  | { status: "conflict"; jobId: string; contentHash: string; existingHash: string };

export interface RecordOptions {
  source: OutputSource;
  /** Ordering targets of the output's effects (schema `effectTargets`); runs sharing one apply in recording order. */
  targets: readonly string[];
  actor?: string;
  /**
   * The output's canonical JSON (schema `canonicalJson(output)`), when the caller has it already:
   * the journal stores and hashes it instead of serializing the output again.
   */
  canonical?: string;
}

export interface RunRecord {
  id: number;
  jobId: string;
  generation: number;
  state: RunState;
  attempts: number;
  leaseExpiries: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  nextAt: number | null;
  lastError: string | null;
  class: FailureClass | null;
  forceUnprobeable: boolean;
  targets: string[];
  createdAt: number;
  updatedAt: number;
}

/** Proof of holding a run: every write under a lease checks the token, so a stale holder changes nothing. */
export interface Lease {
  runId: number;
  jobId: string;
  generation: number;
  token: string;
  owner: string;
  until: number;
}

export interface Claim {
  run: RunRecord;
  output: OutputRecord;
  lease: Lease;
  /** True when the run was taken over from a holder whose lease expired (a crash). */
  takeover: boolean;
}

export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  /** A run taken over this many times goes dead (class infrastructure) instead of being claimed. */
  maxLeaseExpiries: number;
}

export interface EffectRecord {
  key: string;
  generation: number;
  jobId: string;
  idx: number;
  kind: string;
  specHash: string;
  state: EffectState;
  detail: Record<string, unknown> | null;
  attempts: number;
  updatedAt: number;
}

export interface IntendInput {
  key: string;
  idx: number;
  kind: string;
  specHash: string;
  detail?: Record<string, unknown>;
}

export interface EventRecord {
  id: number;
  at: number;
  jobId: string | null;
  type: string;
  data: Record<string, unknown> | null;
  actor: string;
}

export interface ListFilter {
  state?: RunState;
  agent?: string;
  since?: number;
  limit?: number;
}

export interface JournalStatus {
  outputs: number;
  rejections: number;
  deadLetters: number;
  runs: Record<RunState, number>;
  effects: Record<EffectState, number>;
  jobs: Record<JobState, number>;
}

export interface ReplaySelection {
  jobIds?: readonly string[];
  agent?: string;
  since?: number;
  state?: RunState;
  all?: boolean;
}

export interface JobRecord {
  jobId: string;
  agent: string;
  input: unknown;
  inputHash: string;
  state: JobState;
  deliveries: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  nextAt: number | null;
  streamSeq: number | null;
  lastError: string | null;
  /** The failure class of the last failed delivery. */
  lastClass: FailureClass | null;
  createdAt: number;
  updatedAt: number;
}

export type EnqueueResult =
  | { status: "enqueued"; jobId: string; seq: number }
  | { status: "duplicate"; jobId: string; seq: number }
  | { status: "conflict"; jobId: string };

/** A job delivery held by one executor: the in-progress claim of invariant 3. */
export interface JobLease {
  jobId: string;
  token: string;
  owner: string;
  until: number;
  /** Deliveries of this job so far, this one included. */
  deliveries: number;
}

export type JobClaimResult =
  | { status: "acquired"; lease: JobLease; job: JobRecord }
  | { status: "held"; until: number }
  | { status: "recorded" }
  | { status: "dead" }
  | { status: "conflict" };

export interface DeadLetterRecord {
  id: number;
  jobId: string;
  agent: string | null;
  class: FailureClass;
  deliveries: number;
  lastError: string;
  at: number;
  resolvedAt: number | null;
  resolution: string | null;
}

/** What a bulk ledger read returns for one row: all a decision or a plan needs. */
export interface LedgerEntry {
  generation: number;
  state: EffectState;
}

/** The latest run of an output, as a bulk read returns it. */
export interface LatestRun {
  generation: number;
  state: RunState;
}

/** The rows of `rejections`: conflicting submissions, kept as evidence. */
export interface RejectionRecord {
  jobId: string;
  contentHash: string;
  body: string;
  source: string;
  at: number;
}

/** Immutable outputs keyed by job ID (first write wins) and the rejected conflicting submissions. */
export interface JournalOutputs {
  /**
   * Records a validated output, first write wins: same job ID and content hash is `duplicate`
   * (an event only); a different hash is `conflict`, kept in `rejections`. A new output creates
   * run generation 1, pending, and marks the job `done` in the queue, in the same transaction.
   */
  record(output: AgentOutput, options: RecordOptions): Promise<RecordResult>;
  get(jobId: string): Promise<OutputRecord | undefined>;
  has(jobId: string): Promise<boolean>;
  /** Outputs with their latest run, newest first. */
  list(filter?: ListFilter): Promise<OutputSummary[]>;
  /** Outputs a replay selection matches, in recording order. */
  select(selection: ReplaySelection): Promise<OutputRecord[]>;
  /**
   * One page of `select(selection)`: the matching outputs recorded after seq `afterSeq`, at most
   * `limit` of them, in recording order. Pages read one after another see outputs recorded in
   * between, as a later `select` would.
   */
  page(
    selection: ReplaySelection,
    page: { afterSeq: number; limit: number },
  ): Promise<OutputRecord[]>;
  rejections(jobId?: string): Promise<RejectionRecord[]>;
}

/** Runs: one interpretation (generation) of one output, claimed under a lease. */
export interface JournalRuns {
  /**
   * Takes the next due run whose targets have no earlier unfinished run, with a fresh lease token.
   * Due: pending, failed past `nextAt`, or running with an expired lease (counted as a lease expiry,
   * not an attempt; at `maxLeaseExpiries` the run goes dead instead). Atomic across processes.
   */
  claim(options: ClaimOptions): Promise<Claim | undefined>;
  /** @throws LEASE_LOST when the token is stale. Returns the new lease. */
  extendLease(lease: Lease, leaseMs: number): Promise<Lease>;
  /** Gives the run back without counting an expiry (graceful shutdown): pending again, due now. */
  release(lease: Lease): Promise<void>;
  complete(lease: Lease): Promise<void>;
  /** Counts an attempt; the run waits until `nextAt`, then is due again. */
  fail(
    lease: Lease,
    failure: { class: FailureClass; error: string; nextAt: number },
  ): Promise<void>;
  /** Ends the run as dead (no more automatic attempts) with its class and error. */
  markDead(lease: Lease, failure: { class: FailureClass; error: string }): Promise<void>;
  /** Every run of one output, oldest generation first. */
  forJob(jobId: string): Promise<RunRecord[]>;
  latest(jobId: string): Promise<RunRecord | undefined>;
  /** The latest run of each of many outputs (absent: no run), read in bulk. */
  latestOf(jobIds: readonly string[]): Promise<ReadonlyMap<string, LatestRun>>;
  /** Earliest time an active run becomes due (pending: now); undefined when no run is active. */
  nextDueAt(): Promise<number | undefined>;
  /** Counts of active runs: pending, running, failed (waiting for a retry). */
  active(): Promise<{ pending: number; running: number; failed: number }>;
  /** Creates the next generation (pending, empty effects ledger) for each selected output. */
  replay(
    selection: ReplaySelection,
    options: { actor: string; forceUnprobeable?: boolean },
  ): Promise<RunRecord[]>;
}

/** The effects ledger: one row per effect key and generation. */
export interface JournalLedger {
  /** Writes the intent of effect `key` in the lease's generation; returns the existing row if there is one. */
  intend(lease: Lease, effect: IntendInput): Promise<EffectRecord>;
  /** Moves an effect of the lease's generation to a new state with its detail (e.g. the commit sha). */
  settle(
    lease: Lease,
    key: string,
    state: EffectState,
    detail?: Record<string, unknown>,
  ): Promise<void>;
  /** The ledger of one output, every generation unless one is named. */
  forJob(jobId: string, generation?: number): Promise<EffectRecord[]>;
  /** Every generation's row of one effect key, oldest first. */
  history(key: string): Promise<EffectRecord[]>;
  /** Every generation's rows of the effects of many outputs, by effect key, read in bulk. */
  ofJobs(jobIds: readonly string[]): Promise<ReadonlyMap<string, readonly LedgerEntry[]>>;
  /**
   * A human's decision on an uncertain effect of a dead run: settles it `applied` or `skipped`,
   * records the reason and actor as an event, and returns the run to pending.
   */
  resolve(
    jobId: string,
    decision: "applied" | "skipped",
    reason: string,
    actor: string,
  ): Promise<EffectRecord>;
}

/** The job queue and outbox: the embedded queue's rows and the in-progress claims of any transport. */
export interface JournalJobs {
  /**
   * Puts a job in the outbox/queue; the same job ID with another input is a conflict. `durable:
   * false` answers before an fsync: for an outbox row whose job is about to be published, where the
   * stream's PubAck is what the caller is told; make it durable before answering a failed publish.
   */
  enqueue(job: Job, options?: { actor?: string; durable?: boolean }): Promise<EnqueueResult>;
  get(jobId: string): Promise<JobRecord | undefined>;
  /** Notes the job's stream sequence, with an event in the same transaction when one is given. */
  setStreamSeq(
    jobId: string,
    seq: number,
    event?: { type: string; data?: Record<string, unknown>; actor: string },
  ): Promise<void>;
  /** Embedded queue: the next due job, leased; one delivered `maxDeliver` times is dead-lettered instead. */
  claimNext(options: {
    owner: string;
    leaseMs: number;
    agents?: readonly string[];
    maxDeliver?: number;
    /** Told, after the commit, the jobs this call dead-lettered on its way (deliveries used up). */
    onDeadLettered?: (jobIds: string[]) => void;
  }): Promise<{ lease: JobLease; job: JobRecord } | undefined>;
  /**
   * The in-progress claim of a delivered job (any transport). Creates the job row for a job
   * published by another client. `recorded` when its output exists; `held` while another
   * delivery holds it; `dead` once dead-lettered.
   */
  claim(
    job: Job,
    options: { owner: string; leaseMs: number; streamSeq?: number },
  ): Promise<JobClaimResult>;
  extendLease(lease: JobLease, leaseMs: number): Promise<JobLease>;
  /** A failed delivery: back to queued, due at `nextAt`. */
  fail(
    lease: JobLease,
    failure: { class: FailureClass; error: string; nextAt: number },
  ): Promise<void>;
  /** Outbox jobs with neither an output nor a dead letter, created at or after `since`. */
  pending(options?: { since?: number; limit?: number }): Promise<JobRecord[]>;
  /** How many jobs were enqueued (created) at or after `since`; all of them without it. */
  count(options?: { since?: number }): Promise<number>;
}

/** Jobs that never produced an output, and the human's decision on them. */
export interface JournalDeadLetters {
  /** Dead-letters a job (lease optional: JetStream advisories arrive without one). Idempotent per job. */
  add(
    jobId: string,
    failure: { class: FailureClass; error: string; deliveries: number; agent?: string },
    lease?: JobLease,
  ): Promise<void>;
  list(options?: { unresolved?: boolean; since?: number }): Promise<DeadLetterRecord[]>;
  /** Marks a dead letter resolved (retried or dismissed) and, for a retry, returns the job to queued. */
  resolve(
    jobId: string,
    resolution: { action: "retry" | "dismiss"; actor: string; reason?: string },
  ): Promise<{ retries: number }>;
}

/** The append-only event log. */
export interface JournalEvents {
  append(event: {
    jobId: string | null;
    type: string;
    data?: Record<string, unknown>;
    actor: string;
  }): Promise<void>;
  list(filter?: {
    jobId?: string;
    since?: number;
    type?: string;
    limit?: number;
  }): Promise<EventRecord[]>;
  /** Counts events by type (audit: redeliveries skipped, conflicts refused). */
  count(types: readonly string[], since?: number): Promise<Record<string, number>>;
}

/** What only operators do: prune, integrity, backup. */
export interface JournalMaintenance {
  /**
   * Removes outputs recorded before `before` (with their runs, effects, events, rejections, job and
   * dead letters) through the prune guard, each after `archive` has taken it. Outputs with an active
   * run are kept. `dryRun` only counts.
   */
  prune(options: PruneOptions): Promise<PruneResult>;
  /** Checks the store's integrity and that its immutability triggers are present; lists what is wrong. */
  integrity(): Promise<string[]>;
  /** A consistent copy of the journal while it is in use. */
  backup(file: string): Promise<void>;
}

/**
 * The journal: immutable outputs keyed by job ID, runs (one generation per interpretation), the
 * effects ledger, the job queue/outbox, dead letters and an append-only event log, grouped by
 * concern so that a name says what it acts on.
 *
 * Every method is atomic (one transaction). Writes made under a lease check its token and throw
 * `LEASE_LOST` for a stale holder. Errors other than the documented outcomes propagate.
 */
export interface JournalStore extends LegacyFlatJournal {
  /** Where the journal lives: a file path (SQLite), or a URL without its password. */
  readonly location: string;
  /**
   * Why this handle can no longer make a write durable (its fsync failed: the kernel may have
   * dropped the pages, so a retry could "succeed" without them), or undefined while it can. Once
   * set, every write throws it: only a new process, reopening the journal, can go on.
   */
  readonly failure: IdemError | undefined;
  readonly outputs: JournalOutputs;
  readonly runs: JournalRuns;
  readonly ledger: JournalLedger;
  readonly jobs: JournalJobs;
  readonly deadLetters: JournalDeadLetters;
  readonly events: JournalEvents;
  readonly maintenance: JournalMaintenance;
  /** Counts of outputs, latest runs, effects, rejections, dead letters and jobs by state. */
  status(): Promise<JournalStatus>;
  close(): Promise<void>;
}

/**
 * TEMPORARY (refactor in progress): the old flat journal interface, kept only until every caller
 * uses the namespaces of `JournalStore`. Do not add callers.
 *
 * The journal: immutable outputs keyed by job ID, runs (one generation per interpretation), the
 * effects ledger, the job queue/outbox, dead letters and an append-only event log.
 *
 * Every method is atomic (one transaction). Writes made under a lease check its token and throw
 * `LEASE_LOST` for a stale holder. Errors other than the documented outcomes propagate.
 */
export interface LegacyFlatJournal {
  readonly path: string;

  // --- outputs -------------------------------------------------------------------------------
  /**
   * Records a validated output, first write wins: same job ID and content hash is `duplicate`
   * (an event only); a different hash is `conflict`, kept in `rejections`. A new output creates
   * run generation 1, pending, and marks the job `done` in the queue, in the same transaction.
   */
  record(output: AgentOutput, options: RecordOptions): Promise<RecordResult>;
  get(jobId: string): Promise<OutputRecord | undefined>;
  has(jobId: string): Promise<boolean>;
  list(filter?: ListFilter): Promise<OutputSummary[]>;
  rejections(
    jobId?: string,
  ): Promise<{ jobId: string; contentHash: string; body: string; source: string; at: number }[]>;

  // --- runs ----------------------------------------------------------------------------------
  /**
   * Takes the next due run whose targets have no earlier unfinished run, with a fresh lease token.
   * Due: pending, failed past `nextAt`, or running with an expired lease (counted as a lease expiry,
   * not an attempt; at `maxLeaseExpiries` the run goes dead instead). Atomic across processes.
   */
  claim(options: ClaimOptions): Promise<Claim | undefined>;
  /** @throws LEASE_LOST when the token is stale. Returns the new lease. */
  extendLease(lease: Lease, leaseMs: number): Promise<Lease>;
  /** Gives the run back without counting an expiry (graceful shutdown): pending again, due now. */
  release(lease: Lease): Promise<void>;
  complete(lease: Lease): Promise<void>;
  /** Counts an attempt; the run waits until `nextAt`, then is due again. */
  fail(
    lease: Lease,
    failure: { class: FailureClass; error: string; nextAt: number },
  ): Promise<void>;
  dead(lease: Lease, failure: { class: FailureClass; error: string }): Promise<void>;
  latestRun(jobId: string): Promise<RunRecord | undefined>;
  /** Earliest time an active run becomes due (pending: now); undefined when no run is active. */
  nextDueAt(): Promise<number | undefined>;
  /** Counts of active runs: pending, running, failed (waiting for a retry). */
  activeRuns(): Promise<{ pending: number; running: number; failed: number }>;
  /** Creates the next generation (pending, empty effects ledger) for each selected output. */
  replay(
    selection: ReplaySelection,
    options: { actor: string; forceUnprobeable?: boolean },
  ): Promise<RunRecord[]>;
  /** Outputs a replay selection matches, in recording order. */
  select(selection: ReplaySelection): Promise<OutputRecord[]>;

  // --- effects ledger ------------------------------------------------------------------------
  /** Writes the intent of effect `key` in the lease's generation; returns the existing row if there is one. */
  intend(lease: Lease, effect: IntendInput): Promise<EffectRecord>;
  /** Moves an effect of the lease's generation to a new state with its detail (e.g. the commit sha). */
  settle(
    lease: Lease,
    key: string,
    state: EffectState,
    detail?: Record<string, unknown>,
  ): Promise<void>;
  /** The ledger of one output, every generation unless one is named. */
  effects(jobId: string, generation?: number): Promise<EffectRecord[]>;
  /** Every generation's row of one effect key, oldest first. */
  effectHistory(key: string): Promise<EffectRecord[]>;
  /**
   * A human's decision on an uncertain effect of a dead run: settles it `applied` or `skipped`,
   * records the reason and actor as an event, and returns the run to pending.
   */
  resolve(
    jobId: string,
    decision: "applied" | "skipped",
    reason: string,
    actor: string,
  ): Promise<EffectRecord>;

  // --- events --------------------------------------------------------------------------------
  appendEvent(event: {
    jobId: string | null;
    type: string;
    data?: Record<string, unknown>;
    actor: string;
  }): Promise<void>;
  /** Counts events by type (audit: redeliveries skipped, conflicts refused). */
  countEvents(types: readonly string[], since?: number): Promise<Record<string, number>>;

  // --- jobs: the outbox and the embedded queue -----------------------------------------------
  /**
   * Puts a job in the outbox/queue; the same job ID with another input is a conflict. `durable:
   * false` answers before an fsync: for an outbox row whose job is about to be published, where the
   * stream's PubAck is what the caller is told; make it durable before answering a failed publish.
   */
  enqueueJob(job: Job, options?: { actor?: string; durable?: boolean }): Promise<EnqueueResult>;
  getJob(jobId: string): Promise<JobRecord | undefined>;
  /** Notes the job's stream sequence, with an event in the same transaction when one is given. */
  setJobStreamSeq(
    jobId: string,
    seq: number,
    event?: { type: string; data?: Record<string, unknown>; actor: string },
  ): Promise<void>;
  /** Embedded queue: the next due job; one already delivered `maxDeliver` times is dead-lettered instead (queued past `nextAt`, or running with an expired lease), leased. */
  claimNextJob(options: {
    owner: string;
    leaseMs: number;
    agents?: readonly string[];
    maxDeliver?: number;
    /** Told, after the commit, the jobs this call dead-lettered on its way (deliveries used up). */
    onDeadLettered?: (jobIds: string[]) => void;
  }): Promise<{ lease: JobLease; job: JobRecord } | undefined>;
  /**
   * The in-progress claim of a delivered job (any transport). Creates the job row for a job
   * published by another client. `recorded` when its output exists; `held` while another
   * delivery holds it; `dead` once dead-lettered.
   */
  claimJob(
    job: Job,
    options: {
      owner: string;
      leaseMs: number;
      /** The delivery's stream sequence, noted with the lease (for the outbox republish). */
      streamSeq?: number;
    },
  ): Promise<JobClaimResult>;
  extendJobLease(lease: JobLease, leaseMs: number): Promise<JobLease>;
  /** A failed delivery: back to queued, due at `nextAt`. */
  failJob(
    lease: JobLease,
    failure: { class: FailureClass; error: string; nextAt: number },
  ): Promise<void>;
  /** Dead-letters a job (lease optional: JetStream advisories arrive without one). Idempotent per job. */
  deadLetterJob(
    jobId: string,
    failure: { class: FailureClass; error: string; deliveries: number; agent?: string },
    lease?: JobLease,
  ): Promise<void>;
  /** Marks a dead letter resolved (retried or dismissed) and, for a retry, returns the job to queued. */
  resolveDeadLetter(
    jobId: string,
    resolution: { action: "retry" | "dismiss"; actor: string; reason?: string },
  ): Promise<{ retries: number }>;
  /** Outbox jobs with neither an output nor a dead letter, created at or after `since`. */
  pendingJobs(options?: { since?: number; limit?: number }): Promise<JobRecord[]>;

  // --- maintenance ---------------------------------------------------------------------------
  /**
   * Removes outputs recorded before `before` (with their runs, effects, events, rejections, job and
   * dead letters) through the prune guard, each after `archive` has taken it. Outputs with an active
   * run are kept. `dryRun` only counts.
   */
  prune(options: PruneOptions): Promise<PruneResult>;
  /** Runs `PRAGMA integrity_check` and checks the triggers are present; lists what is wrong. */
  integrity(): Promise<string[]>;
  /** A consistent copy of the journal while it is in use (SQLite online backup). */
  backup(file: string): Promise<void>;
  /**
   * One page of `select(selection)`: the matching outputs recorded after seq `afterSeq`, at most
   * `limit` of them, in recording order. For a reader that starts work on the first outputs before
   * the last are read (a replay plan starts its target probes early); pages read one after another
   * see outputs recorded in between, as a later `select` would.
   */
  selectPage(
    selection: ReplaySelection,
    page: { afterSeq: number; limit: number },
  ): Promise<OutputRecord[]>;
}

export interface PruneOptions {
  before: number;
  dryRun?: boolean;
  actor?: string;
  archive?: (entry: ArchivedOutput) => Promise<void> | void;
}

export interface ArchivedOutput {
  output: OutputRecord;
  runs: RunRecord[];
  effects: EffectRecord[];
  events: EventRecord[];
  rejections: RejectionRecord[];
  job: JobRecord | undefined;
}

export interface PruneResult {
  outputs: number;
  runs: number;
  effects: number;
  events: number;
  rejections: number;
  jobs: number;
}
