import type { JournalStatus, JournalStore } from "@idem/journal";
import type { Config } from "@idem/schema";

/** Something on the overview that wants a person: too many dead letters, or uncertain effects. */
export interface OverviewAlert {
  kind: "dead-letters" | "uncertain-effects" | "dead-runs";
  message: string;
  count: number;
}

/** The console's overview: the counts of `idem status` and the alerts derived from them. */
export interface Overview {
  at: number;
  status: JournalStatus;
  /** Dead letters written in the last hour (resolved or not). */
  deadLettersLastHour: number;
  /** `alerts.deadLettersPerHour` of the config. */
  deadLettersPerHour: number;
  alerts: OverviewAlert[];
}

const HOUR_MS = 3_600_000;

/**
 * The overview of a journal: `status()` (the counts `idem status` prints) and the dead letters of
 * the last hour (read through their time index), with an alert when those exceed
 * `alerts.deadLettersPerHour`, when effects are uncertain and when runs are dead. Costs about what
 * `status()` costs: nothing else is scanned. Read-only; journal errors propagate.
 */
export async function readOverview(
  journal: JournalStore,
  options: { config: Config; now?: number },
): Promise<Overview> {
  const at = options.now ?? Date.now();
  const [status, lastHour] = await Promise.all([
    journal.status(),
    journal.deadLetters.list({ since: at - HOUR_MS }),
  ]);
  const perHour = options.config.alerts.deadLettersPerHour;
  const alerts: OverviewAlert[] = [];
  if (lastHour.length > perHour) {
    alerts.push({
      kind: "dead-letters",
      count: lastHour.length,
      message: `${lastHour.length} dead letters in the last hour, over the threshold of ${perHour} (alerts.deadLettersPerHour)`,
    });
  }
  if (status.effects.uncertain > 0) {
    alerts.push({
      kind: "uncertain-effects",
      count: status.effects.uncertain,
      message: `${status.effects.uncertain} uncertain effect(s) wait for a decision (idem dlq resolve)`,
    });
  }
  if (status.runs.dead > 0) {
    alerts.push({
      kind: "dead-runs",
      count: status.runs.dead,
      message: `${status.runs.dead} dead run(s): retry or resolve them`,
    });
  }
  return {
    at,
    status,
    deadLettersLastHour: lastHour.length,
    deadLettersPerHour: perHour,
    alerts,
  };
}
