import type { JournalStore } from "@idem/journal";
import type { Config } from "@idem/schema";
import type { ActivityHistory } from "./activity.js";
import { type Overview, readOverview } from "./views/read-overview.js";

/**
 * The overview as every viewer of the console shares it. On a large journal `status()` is a scan
 * of its tables (seconds at millions of outputs), so the live polls of many open pages must not
 * each start one: concurrent reads share one, and a poll takes a result younger than five times
 * what the last read cost (3 s at least). A page loaded by a person reads afresh. The chart's
 * activity comes from the journal: the first read takes its whole window, later ones only the last
 * minutes, merged into what the console holds (ActivityHistory); every result carries the whole
 * window.
 */
export class SharedOverview {
  private last: { value: Overview; costMs: number } | undefined;
  private inFlight: Promise<Overview> | undefined;

  constructor(
    private readonly journal: JournalStore,
    private readonly config: Config,
    private readonly history: ActivityHistory,
    private readonly now: () => number,
  ) {}

  /** A fresh read, or the one in flight. */
  read(): Promise<Overview> {
    if (this.inFlight !== undefined) return this.inFlight;
    const started = this.now();
    const p = readOverview(this.journal, {
      config: this.config,
      now: started,
      activitySince: this.history.nextSince(started),
    }).then((read) => {
      const value = { ...read, activity: this.history.merge(read.activity, read.at) };
      this.last = { value, costMs: Math.max(0, this.now() - started) };
      return value;
    });
    this.inFlight = p;
    const clear = () => {
      if (this.inFlight === p) this.inFlight = undefined;
    };
    p.then(clear, clear);
    return p;
  }

  /** For a live poll: the last result while it is recent enough. */
  recent(): Promise<Overview> {
    const last = this.last;
    if (last && this.now() - last.value.at < Math.max(3_000, 5 * last.costMs))
      return Promise.resolve(last.value);
    return this.read();
  }
}
