import type { AgentOutput, FailureClass } from "@idem/schema";
import type { JobLease } from "../port/jobs.js";
import type { RecordOptions } from "../port/outputs.js";

/**
 * The writes both adapters make inside a transaction, each as one object: what the port's
 * methods decide, named, rather than five positional arguments a call site could swap.
 */

/** One record to write: the output, its options, its canonical JSON and that JSON's hash. */
export interface RecordRequest {
  output: AgentOutput;
  options: RecordOptions;
  body: string;
  hash: string;
}

/** A new pending run of an output (generation 1 at record time, the next one on a replay). */
export interface NewRun {
  jobId: string;
  generation: number;
  /** Its ordering targets: the run takes its place behind the active runs on each. */
  targets: readonly string[];
  /** Apply what cannot be probed even when an earlier generation settled it (`--force-unprobeable`). */
  forceUnprobeable: boolean;
  /** The time written as created and updated (the clock's now). */
  now: number;
}

/** Why a run goes dead, and who says so (its event's actor). */
export interface RunDeath {
  class: FailureClass;
  error: string;
  actor: string;
}

/** A job's dead letter: whose, why, by whom, and under which delivery's lease if any. */
export interface DeadLetterWrite {
  jobId: string;
  failure: { class: FailureClass; error: string; deliveries: number; agent?: string };
  actor: string;
  /** The delivery's lease: the job's row moves only while it is still held under this token. */
  lease?: JobLease;
}
