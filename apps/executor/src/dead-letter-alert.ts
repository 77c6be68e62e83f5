import type { JournalStore } from "@idem/journal";
import type { Logger } from "@idem/runtime";
import type { Clock, Config } from "@idem/schema";

/**
 * Raises the dead-letter alert: a pino warn line, and a POST of `{ type, count, threshold, jobId }`
 * to `alerts.webhook` when set, whenever dead letters of the last hour exceed
 * `alerts.deadLettersPerHour`. Never throws: an alert that cannot be sent is logged.
 */
export async function checkDeadLetterRate(options: {
  journal: JournalStore;
  config: Config;
  clock: Clock;
  log: Logger;
  jobId?: string;
}): Promise<{ count: number; alerted: boolean }> {
  const { journal, config, clock, log } = options;
  try {
    const count = (await journal.deadLetters.list({ since: clock.now() - 3_600_000 })).length;
    const threshold = config.alerts.deadLettersPerHour;
    if (count <= threshold) return { count, alerted: false };
    log.warn(
      { alert: "dead-letters", count, threshold, jobId: options.jobId },
      `ALERT: ${count} dead letters in the last hour (alerts.deadLettersPerHour is ${threshold})`,
    );
    if (config.alerts.webhook) {
      try {
        const res = await fetch(config.alerts.webhook, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            type: "idem.dead_letters",
            count,
            threshold,
            jobId: options.jobId ?? null,
            at: new Date(clock.now()).toISOString(),
          }),
          signal: AbortSignal.timeout(5_000),
        });
        if (!res.ok) log.warn({ status: res.status }, "alert webhook answered an error");
      } catch (e) {
        log.warn({ err: e }, "alert webhook failed");
      }
    }
    return { count, alerted: true };
  } catch (e) {
    log.error({ err: e }, "could not count dead letters");
    return { count: -1, alerted: false };
  }
}
