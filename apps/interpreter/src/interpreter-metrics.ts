import { Counter, Registry } from "prom-client";

/** The interpreter's Prometheus counters, on a registry of their own (several interpreters per process are fine). */
export interface InterpreterMetrics {
  readonly registry: Registry;
  /** Run transitions made by this interpreter: claimed, takeover, done, failed, dead, released, lease_lost. */
  readonly runs: Counter<"outcome">;
  /** Effect outcomes: applied, present, skipped, failed, uncertain, error. */
  readonly effects: Counter<"kind" | "outcome">;
}

/** Creates a fresh set of interpreter metrics. */
export function createInterpreterMetrics(): InterpreterMetrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    runs: new Counter({
      name: "idem_interpreter_runs_total",
      help: "Run transitions made by this interpreter, by outcome",
      labelNames: ["outcome"],
      registers,
    }),
    effects: new Counter({
      name: "idem_interpreter_effects_total",
      help: "Effects settled or failed by this interpreter, by kind and outcome",
      labelNames: ["kind", "outcome"],
      registers,
    }),
  };
}
