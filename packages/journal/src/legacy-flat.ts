/**
 * TEMPORARY (refactor in progress, issue 17): the old flat journal interface and its one-line
 * delegates onto the namespaces of `JournalStore`, kept only until every caller uses the
 * namespaces. Delete this file, `extends LegacyFlatJournal` in journal-store.ts and
 * `extends LegacyFlatDelegates` in the SQLite store, and nothing else changes. Do not add callers.
 */
import type { AgentOutput, FailureClass, Job } from "@idem/schema";
import type { EffectState } from "./domain/states.js";
import type { JournalDeadLetters } from "./port/dead-letters.js";
import type { JournalEvents } from "./port/events.js";
import type {
  EnqueueResult,
  JobClaimResult,
  JobLease,
  JobRecord,
  JournalJobs,
} from "./port/jobs.js";
import type { EffectRecord, IntendInput, JournalLedger } from "./port/ledger.js";
import type { JournalMaintenance, PruneOptions, PruneResult } from "./port/maintenance.js";
import type {
  JournalOutputs,
  ListFilter,
  OutputRecord,
  OutputSummary,
  RecordOptions,
  RecordResult,
  RejectionRecord,
  ReplaySelection,
} from "./port/outputs.js";
import type { Claim, ClaimOptions, JournalRuns, Lease, RunRecord } from "./port/runs.js";

type Failure = { class: FailureClass; error: string; nextAt: number };
type Note = { type: string; data?: Record<string, unknown>; actor: string };
type ClaimNext = Parameters<JournalJobs["claimNext"]>[0];
type DeadFailure = { class: FailureClass; error: string; deliveries: number; agent?: string };
type Resolution = { action: "retry" | "dismiss"; actor: string; reason?: string };

/**
 * TEMPORARY: the old flat journal interface (see the file header). Each member is the namespaced
 * one named in its comment; its semantics are documented there.
 */
export interface LegacyFlatJournal {
  /** `location`. */
  readonly path: string;
  /** `outputs.record`. */
  record(output: AgentOutput, options: RecordOptions): Promise<RecordResult>;
  /** `outputs.get`. */
  get(jobId: string): Promise<OutputRecord | undefined>;
  /** `outputs.has`. */
  has(jobId: string): Promise<boolean>;
  /** `outputs.list`. */
  list(filter?: ListFilter): Promise<OutputSummary[]>;
  /** `outputs.rejections`. */
  rejections(jobId?: string): Promise<RejectionRecord[]>;
  /** `outputs.select`. */
  select(selection: ReplaySelection): Promise<OutputRecord[]>;
  /** `outputs.page`. */
  selectPage(
    selection: ReplaySelection,
    page: { afterSeq: number; limit: number },
  ): Promise<OutputRecord[]>;
  /** `runs.claim`. */
  claim(options: ClaimOptions): Promise<Claim | undefined>;
  /** `runs.extendLease`. */
  extendLease(lease: Lease, leaseMs: number): Promise<Lease>;
  /** `runs.release`. */
  release(lease: Lease): Promise<void>;
  /** `runs.complete`. */
  complete(lease: Lease): Promise<void>;
  /** `runs.fail`. */
  fail(lease: Lease, failure: Failure): Promise<void>;
  /** `runs.markDead`. */
  dead(lease: Lease, failure: { class: FailureClass; error: string }): Promise<void>;
  /** `runs.latest`. */
  latestRun(jobId: string): Promise<RunRecord | undefined>;
  /** `runs.nextDueAt`. */
  nextDueAt(): Promise<number | undefined>;
  /** `runs.active`. */
  activeRuns(): Promise<{ pending: number; running: number; failed: number }>;
  /** `runs.replay`. */
  replay(
    selection: ReplaySelection,
    options: { actor: string; forceUnprobeable?: boolean },
  ): Promise<RunRecord[]>;
  /** `ledger.intend`. */
  intend(lease: Lease, effect: IntendInput): Promise<EffectRecord>;
  /** `ledger.settle`. */
  settle(
    lease: Lease,
    key: string,
    state: EffectState,
    detail?: Record<string, unknown>,
  ): Promise<void>;
  /** `ledger.forJob`. */
  effects(jobId: string, generation?: number): Promise<EffectRecord[]>;
  /** `ledger.history`. */
  effectHistory(key: string): Promise<EffectRecord[]>;
  /** `ledger.resolve`. */
  resolve(
    jobId: string,
    decision: "applied" | "skipped",
    reason: string,
    actor: string,
  ): Promise<EffectRecord>;
  /** `events.append`. */
  appendEvent(event: {
    jobId: string | null;
    type: string;
    data?: Record<string, unknown>;
    actor: string;
  }): Promise<void>;
  /** `events.count`. */
  countEvents(types: readonly string[], since?: number): Promise<Record<string, number>>;
  /** `jobs.enqueue`. */
  enqueueJob(job: Job, options?: { actor?: string; durable?: boolean }): Promise<EnqueueResult>;
  /** `jobs.get`. */
  getJob(jobId: string): Promise<JobRecord | undefined>;
  /** `jobs.setStreamSeq`. */
  setJobStreamSeq(jobId: string, seq: number, event?: Note): Promise<void>;
  /** `jobs.claimNext`. */
  claimNextJob(options: ClaimNext): Promise<{ lease: JobLease; job: JobRecord } | undefined>;
  /** `jobs.claim`. */
  claimJob(
    job: Job,
    options: { owner: string; leaseMs: number; streamSeq?: number },
  ): Promise<JobClaimResult>;
  /** `jobs.extendLease`. */
  extendJobLease(lease: JobLease, leaseMs: number): Promise<JobLease>;
  /** `jobs.fail`. */
  failJob(lease: JobLease, failure: Failure): Promise<void>;
  /** `jobs.pending`. */
  pendingJobs(options?: { since?: number; limit?: number }): Promise<JobRecord[]>;
  /** `deadLetters.add`. */
  deadLetterJob(jobId: string, failure: DeadFailure, lease?: JobLease): Promise<void>;
  /** `deadLetters.resolve`. */
  resolveDeadLetter(jobId: string, resolution: Resolution): Promise<{ retries: number }>;
  /** `maintenance.prune`. */
  prune(options: PruneOptions): Promise<PruneResult>;
  /** `maintenance.integrity`. */
  integrity(): Promise<string[]>;
  /** `maintenance.backup`. */
  backup(file: string): Promise<void>;
}

/**
 * TEMPORARY: the flat methods as one-line delegates onto the namespaces, for a store to extend
 * (see the file header).
 */
export abstract class LegacyFlatDelegates implements LegacyFlatJournal {
  abstract readonly location: string;
  abstract readonly outputs: JournalOutputs;
  abstract readonly runs: JournalRuns;
  abstract readonly ledger: JournalLedger;
  abstract readonly jobs: JournalJobs;
  abstract readonly deadLetters: JournalDeadLetters;
  abstract readonly events: JournalEvents;
  abstract readonly maintenance: JournalMaintenance;

  get path(): string {
    return this.location;
  }
  record(o: AgentOutput, opts: RecordOptions) {
    return this.outputs.record(o, opts);
  }
  get(jobId: string) {
    return this.outputs.get(jobId);
  }
  has(jobId: string) {
    return this.outputs.has(jobId);
  }
  list(filter?: ListFilter) {
    return this.outputs.list(filter);
  }
  rejections(jobId?: string) {
    return this.outputs.rejections(jobId);
  }
  select(s: ReplaySelection) {
    return this.outputs.select(s);
  }
  selectPage(s: ReplaySelection, page: { afterSeq: number; limit: number }) {
    return this.outputs.page(s, page);
  }
  claim(options: ClaimOptions) {
    return this.runs.claim(options);
  }
  extendLease(lease: Lease, ms: number) {
    return this.runs.extendLease(lease, ms);
  }
  release(lease: Lease) {
    return this.runs.release(lease);
  }
  complete(lease: Lease) {
    return this.runs.complete(lease);
  }
  fail(lease: Lease, failure: Failure) {
    return this.runs.fail(lease, failure);
  }
  dead(lease: Lease, failure: { class: FailureClass; error: string }) {
    return this.runs.markDead(lease, failure);
  }
  latestRun(jobId: string) {
    return this.runs.latest(jobId);
  }
  nextDueAt() {
    return this.runs.nextDueAt();
  }
  activeRuns() {
    return this.runs.active();
  }
  replay(s: ReplaySelection, options: { actor: string; forceUnprobeable?: boolean }) {
    return this.runs.replay(s, options);
  }
  intend(lease: Lease, effect: IntendInput) {
    return this.ledger.intend(lease, effect);
  }
  settle(lease: Lease, key: string, state: EffectState, detail?: Record<string, unknown>) {
    return this.ledger.settle(lease, key, state, detail);
  }
  effects(jobId: string, generation?: number) {
    return this.ledger.forJob(jobId, generation);
  }
  effectHistory(key: string) {
    return this.ledger.history(key);
  }
  resolve(jobId: string, decision: "applied" | "skipped", reason: string, actor: string) {
    return this.ledger.resolve(jobId, decision, reason, actor);
  }
  appendEvent(event: Parameters<JournalEvents["append"]>[0]) {
    return this.events.append(event);
  }
  countEvents(types: readonly string[], since?: number) {
    return this.events.count(types, since);
  }
  enqueueJob(job: Job, options?: { actor?: string; durable?: boolean }) {
    return this.jobs.enqueue(job, options);
  }
  getJob(jobId: string) {
    return this.jobs.get(jobId);
  }
  setJobStreamSeq(jobId: string, seq: number, event?: Note) {
    return this.jobs.setStreamSeq(jobId, seq, event);
  }
  claimNextJob(options: ClaimNext) {
    return this.jobs.claimNext(options);
  }
  claimJob(job: Job, options: { owner: string; leaseMs: number; streamSeq?: number }) {
    return this.jobs.claim(job, options);
  }
  extendJobLease(lease: JobLease, ms: number) {
    return this.jobs.extendLease(lease, ms);
  }
  failJob(lease: JobLease, failure: Failure) {
    return this.jobs.fail(lease, failure);
  }
  pendingJobs(options?: { since?: number; limit?: number }) {
    return this.jobs.pending(options);
  }
  deadLetterJob(jobId: string, failure: DeadFailure, lease?: JobLease) {
    return this.deadLetters.add(jobId, failure, lease);
  }
  resolveDeadLetter(jobId: string, resolution: Resolution) {
    return this.deadLetters.resolve(jobId, resolution);
  }
  prune(options: PruneOptions) {
    return this.maintenance.prune(options);
  }
  integrity() {
    return this.maintenance.integrity();
  }
  backup(file: string) {
    return this.maintenance.backup(file);
  }
}
