import type { JournalStore } from "@idem/journal";
import { EFFECT_STATES, RUN_STATES } from "@idem/schema";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** The executor's Prometheus metrics, on a registry of their own (several executors per process are fine). */
export interface ExecutorMetrics {
  readonly registry: Registry;
  readonly deliveries: Counter<"transport">;
  readonly skippedRedeliveries: Counter;
  readonly records: Counter<"source" | "status">;
  readonly conflicts: Counter<"source">;
  readonly invalid: Counter<"source">;
  readonly forbidden: Counter<"source">;
  readonly naks: Counter<"reason">;
  readonly deadLetters: Counter;
  readonly recordRetries: Counter;
  readonly agentRunSeconds: Histogram<"agent" | "outcome">;
  /** Reads runs and effects by state from the journal into the gauges. */
  refresh(journal: JournalStore): Promise<void>;
}

/** Creates a fresh set of executor metrics. */
export function createExecutorMetrics(): ExecutorMetrics {
  const registry = new Registry();
  const registers = [registry];
  const runs = new Gauge({
    name: "idem_runs",
    help: "Latest runs by state, read from the journal",
    labelNames: ["state"],
    registers,
  });
  const effects = new Gauge({
    name: "idem_effects",
    help: "Effects by state, read from the journal",
    labelNames: ["state"],
    registers,
  });
  const outputs = new Gauge({ name: "idem_outputs", help: "Recorded outputs", registers });
  const deadLetterGauge = new Gauge({
    name: "idem_dead_letters",
    help: "Dead-lettered jobs in the journal",
    registers,
  });
  return {
    registry,
    deliveries: new Counter({
      name: "idem_executor_deliveries_total",
      help: "Job deliveries received",
      labelNames: ["transport"],
      registers,
    }),
    skippedRedeliveries: new Counter({
      name: "idem_executor_redeliveries_skipped_total",
      help: "Deliveries of jobs whose output was already recorded (acked, agent not run)",
      registers,
    }),
    records: new Counter({
      name: "idem_executor_records_total",
      help: "Outputs recorded, by source and result",
      labelNames: ["source", "status"],
      registers,
    }),
    conflicts: new Counter({
      name: "idem_executor_conflicts_total",
      help: "Outputs refused because another output was recorded first",
      labelNames: ["source"],
      registers,
    }),
    invalid: new Counter({
      name: "idem_executor_invalid_outputs_total",
      help: "Invalid outputs (nothing written)",
      labelNames: ["source"],
      registers,
    }),
    forbidden: new Counter({
      name: "idem_executor_forbidden_outputs_total",
      help: "Outputs an agent's credential may not record (nothing written)",
      labelNames: ["source"],
      registers,
    }),
    naks: new Counter({
      name: "idem_executor_naks_total",
      help: "Deliveries given back for later (failed or held by another delivery)",
      labelNames: ["reason"],
      registers,
    }),
    deadLetters: new Counter({
      name: "idem_executor_dead_letters_total",
      help: "Jobs dead-lettered by this executor",
      registers,
    }),
    recordRetries: new Counter({
      name: "idem_executor_record_retries_total",
      help: "Journal writes of an output retried because the journal could not take them",
      registers,
    }),
    agentRunSeconds: new Histogram({
      name: "idem_executor_agent_run_seconds",
      help: "Agent run time",
      labelNames: ["agent", "outcome"],
      buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900],
      registers,
    }),
    async refresh(journal) {
      const s = await journal.status();
      for (const state of RUN_STATES) runs.set({ state }, s.runs[state] ?? 0);
      for (const state of EFFECT_STATES) effects.set({ state }, s.effects[state] ?? 0);
      outputs.set(s.outputs);
      deadLetterGauge.set(s.deadLetters);
    },
  };
}
