import { type LeasedJob, readLeasedJobs } from "@idem/core";
import type { JournalActivity, JournalStatus, JournalStore } from "@idem/journal";
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
  /**
   * Outputs recorded and effects applied per minute (the chart), from the journal: from
   * `activitySince` (by default the last ACTIVITY_HOURS) to the end of the minute of `at`.
   */
  activity: JournalActivity;
  /**
   * The jobs under a delivery's lease (the first LEASED_SHOWN): who holds each and until when,
   * `ended` once the lease has ended with no output (its executor died or stalled).
   */
  leased: LeasedJob[];
}

const HOUR_MS = 3_600_000;
/** The chart's bucket: one minute. */
export const ACTIVITY_BUCKET_MS = 60_000;
/** The hours of history the overview's chart shows. */
export const ACTIVITY_HOURS = 3;

/** The end of the minute of `at`: the chart's window ends there (exclusive). */
export const activityUntil = (at: number): number =>
  Math.floor(at / ACTIVITY_BUCKET_MS) * ACTIVITY_BUCKET_MS + ACTIVITY_BUCKET_MS;

/** The start of the chart's window at `at`: ACTIVITY_HOURS of whole minutes, `at`'s the last. */
export const activityStart = (at: number): number => activityUntil(at) - ACTIVITY_HOURS * HOUR_MS;

/**
 * The overview of a journal: `status()` (the counts `idem status` prints), the dead letters of the
 * last hour (read through their time index), with an alert when those exceed
 * `alerts.deadLettersPerHour`, when effects are uncertain and when runs are dead, and the chart's
 * activity per minute (`activity()`, through the time indexes of outputs and applied effects).
 * Costs about what `status()` costs: nothing else is scanned. The three reads run at once.
 * `activitySince` (floored to its minute) lets a caller that holds the earlier minutes of the
 * window read only the last ones. Read-only; journal errors propagate.
 */
export async function readOverview(
  journal: JournalStore,
  options: { config: Config; now?: number; activitySince?: number },
): Promise<Overview> {
  const at = options.now ?? Date.now();
  const until = activityUntil(at);
  const asked = options.activitySince ?? activityStart(at);
  const since = Math.min(
    until - ACTIVITY_BUCKET_MS,
    Math.floor(asked / ACTIVITY_BUCKET_MS) * ACTIVITY_BUCKET_MS,
  );
  const [status, lastHour, activity, leased] = await Promise.all([
    journal.status(),
    journal.deadLetters.list({ since: at - HOUR_MS }),
    journal.activity({ since, until, bucketMs: ACTIVITY_BUCKET_MS }),
    readLeasedJobs(journal, { now: at }),
  ]);
  const perHour = options.config.alerts.deadLettersPerHour;
  const alerts: OverviewAlert[] = [];
  if (lastHour.length > perHour) {
    alerts.push({
      kind: "dead-letters",
      count: lastHour.length,
      message: `${lastHour.length} jobs dead-lettered in the last hour, over the threshold of ${perHour} (alerts.deadLettersPerHour)`,
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
      message: `${status.runs.dead} dead run(s) in the dead letters: retry or resolve them`,
    });
  }
  return {
    at,
    status,
    deadLettersLastHour: lastHour.length,
    deadLettersPerHour: perHour,
    alerts,
    activity,
    leased,
  };
}
