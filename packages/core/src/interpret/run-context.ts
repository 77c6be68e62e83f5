import type { Effects } from "@idem/effects";
import type { JournalStore } from "@idem/journal";
import type { Logger, Tracing } from "@idem/runtime";
import type { Clock, Config, EffectSpec, FailureClass, FaultHook } from "@idem/schema";
import type { SupersedeIndex } from "../decide/supersede-index.js";
import type { TargetTurns } from "./target-turns.js";

/** How one claimed run ended in this interpreter. */
export interface RunOutcome {
  jobId: string;
  generation: number;
  /**
   * done: every effect settled. failed: a retry is scheduled. dead: waits for a human. released:
   * given back on shutdown. lease-lost: another holder took it over; nothing was written.
   * awaiting: stopped before an effect that needs a person's approval (docs/approvals.md).
   */
  outcome: "done" | "failed" | "dead" | "released" | "lease-lost" | "awaiting";
  class?: FailureClass;
  error?: string;
}

/** A counter as interpretation uses it (prom-client's Counter fits). */
export interface InterpretCounter<L extends string> {
  inc(labels: Partial<Record<L, string>>): void;
}

/** What interpretation counts: run transitions by outcome, effects by kind and outcome. */
export interface InterpretMetrics {
  /** claimed, takeover, done, failed, dead, released, lease-lost, awaiting. */
  readonly runs: InterpretCounter<"outcome">;
  /** applied, present, skipped, uncertain, conflict, error. */
  readonly effects: InterpretCounter<"kind" | "outcome">;
}

/** What the interpretation of a run works with; built once per interpreter. */
export interface InterpretRunContext {
  journal: JournalStore;
  effects: Effects;
  settings: Config["interpreter"];
  clock: Clock;
  fault: FaultHook;
  /** The interpreter's logger (with its owner); each run logs on a child with its job and generation. */
  log: Logger;
  metrics: InterpretMetrics;
  /**
   * The config's `approvals` (docs/approvals.md): effects its rules (or their kind) name wait for a
   * person's approval before they are applied. Absent: no effect waits.
   */
  approvals?: Config["approvals"];
  /** Which effects a later output supersedes (a kind's supersedeKey: file.write's path). */
  supersede: SupersedeIndex;
  /** Aborted when the interpreter stops: the run is released before its next effect. */
  stopSignal: AbortSignal;
  /** The claim, probe and apply spans, continuing the trace kept with the record; off by default. */
  tracing: Tracing;
  /** The ordering target of an effect (`repo:site@main`), an attribute of its spans. */
  targetOf(spec: EffectSpec): string | undefined;
  /**
   * The order between the runs this interpreter holds at once (its pipeline): the run takes its
   * turn on each target before acting there and hands the target over after its last effect there.
   * Absent: the run is alone on its targets.
   */
  turns?: TargetTurns;
}
