import type { AgentOutput } from "@idem/schema";
import type { RunState } from "../domain/states.js";

/** Where an output came from: the executor's own agent run, the HTTP API, NATS submit or the CLI. */
export type OutputSource = "executor" | "http" | "nats" | "cli" | (string & {});

/** A recorded output: immutable once written (first write wins), keyed by its job ID. */
export interface OutputRecord {
  /** Recording order, increasing. */
  seq: number;
  jobId: string;
  agent: string;
  /** sha256 of the output's canonical JSON: what tells a duplicate from a conflict. */
  contentHash: string;
  output: AgentOutput;
  source: OutputSource;
  recordedAt: number;
  /**
   * The W3C trace context (`traceparent`) the output was recorded under, when it was recorded
   * with one (absent otherwise): the interpreter continues that trace. Read-only: kept with the
   * record (first write wins), not part of its content or hash.
   */
  traceparent?: string;
}

/**
 * An `outputs` row that cannot be trusted as an output: its body is not the bytes its content hash
 * was taken of, is not JSON, does not match the AgentOutput shape, or names another job or agent
 * than its row (docs/runbook.md, "A damaged output"). Its run ends dead (class `integrity`) when
 * claimed; it never reaches a claim, a select or another output's run.
 */
export interface DamagedOutput {
  seq: number;
  jobId: string;
  agent: string;
  recordedAt: number;
  /** What is wrong with it, never its body. */
  problem: string;
}

/** One line of `outputs.list`: an output with its latest run. */
export interface OutputSummary {
  seq: number;
  jobId: string;
  agent: string;
  /** How many effects the output declares (0 for a damaged one). */
  effects: number;
  /** Set when the row is damaged (see DamagedOutput): what is wrong with it. */
  damaged?: string;
  recordedAt: number;
  /** The latest run's generation and state. */
  generation: number;
  state: RunState;
}

/**
 * The answer to a record: `recorded` (new), `duplicate` (same job ID and content hash: nothing
 * written but an event, safe to ack) or `conflict` (another hash: refused, kept in `rejections`).
 */
export type RecordResult =
  | { status: "recorded"; jobId: string; seq: number; contentHash: string }
  | { status: "duplicate"; jobId: string; seq: number; contentHash: string }
  | { status: "conflict"; jobId: string; contentHash: string; existingHash: string };

/** Where a page of outputs starts and which way it reads (see `JournalOutputs.page`). */
export type OutputsPage =
  | { afterSeq: number; limit: number }
  | { beforeSeq: number; limit: number };

/** How an output is recorded: its source, the ordering targets of its effects, the actor. */
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
  /**
   * The W3C trace context to keep with the record (an opaque string to the journal). Stored only
   * when the output is recorded now: a duplicate or a conflict leaves the stored one as it is,
   * whatever it carries (first write wins; it never tells a duplicate from a conflict).
   */
  traceparent?: string;
}

/** A filter of `outputs.list`: by the latest run's state, the agent, a recording time; a limit. */
export interface ListFilter {
  state?: RunState;
  agent?: string;
  since?: number;
  limit?: number;
}

/**
 * Which outputs a replay (or a select) takes: named job IDs, an agent, recorded since a time, the
 * latest run's state, or `all`. The conditions combine; no condition and no `all` selects nothing.
 */
export interface ReplaySelection {
  jobIds?: readonly string[];
  agent?: string;
  since?: number;
  state?: RunState;
  all?: boolean;
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
   * Answered once durable; concurrent records share one commit and one fsync.
   * @throws IO when the journal's fsync failed (see `JournalStore.failure`).
   */
  record(output: AgentOutput, options: RecordOptions): Promise<RecordResult>;
  /**
   * The recorded output of a job, or undefined.
   * @throws INTEGRITY (`details.reason` `damaged-output`, `details.problem`) when its row is
   * damaged (see DamagedOutput).
   */
  get(jobId: string): Promise<OutputRecord | undefined>;
  /**
   * Whether the job's output is recorded. A yes is durable before it is answered, since callers
   * ack deliveries on it.
   */
  has(jobId: string): Promise<boolean>;
  /** Outputs with their latest run, in recording order; a damaged one too, marked `damaged`. */
  list(filter?: ListFilter): Promise<OutputSummary[]>;
  /**
   * Outputs a replay selection matches, in recording order; `jobIds` may be of any size. Damaged
   * rows are left out (see DamagedOutput; `damaged` lists them).
   */
  select(selection: ReplaySelection): Promise<OutputRecord[]>;
  /**
   * One page of `select(selection)`, at most `limit` outputs (fewer only at the end: damaged rows
   * are skipped, not counted): with `afterSeq`, those recorded after that seq, in recording order;
   * with `beforeSeq`, those recorded before it, newest first (`Number.MAX_SAFE_INTEGER`: the
   * newest). Pages read one after another see outputs recorded in between, as a later `select`
   * would.
   */
  page(selection: ReplaySelection, page: OutputsPage): Promise<OutputRecord[]>;
  /** The refused conflicting submissions, of one job or all, oldest first. */
  rejections(jobId?: string): Promise<RejectionRecord[]>;
  /** Every damaged output row (see DamagedOutput), in recording order: one pass over the table. */
  damaged(): Promise<DamagedOutput[]>;
}
