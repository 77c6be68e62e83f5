import { type AuditReport, buildAudit, type Effects, isAuditClean } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import type { Config } from "@idem/schema";
import { rememberAudit } from "./pages/audit.js";

/** The outputs a background audit looks at: those recorded in the last day. */
export const BACKGROUND_AUDIT_WINDOW_MS = 24 * 3_600_000;
/** The first background audit runs this soon after the console starts (or the interval, if less). */
const FIRST_AUDIT_MS = 5_000;

/** What the overview says of the background audit: its period, and its last failure if any. */
export interface BackgroundAuditState {
  intervalMs: number;
  windowMs: number;
  /** The error of the last background audit, when it failed (cleared by the next that does not). */
  error: { at: number; message: string } | null;
}

/**
 * The console's background audit (`console.auditIntervalMs`): drift and duplicates found without
 * anyone asking. One audit at a time, over the outputs of the last day
 * (BACKGROUND_AUDIT_WINDOW_MS), the next starting a whole interval after the previous one ended:
 * an audit never overlaps another and takes at most its own duration out of each interval.
 * Its report is remembered as the audit page's is, for the overview's alerts. A failure (a target
 * that cannot be read, a journal closing) is kept for the overview and tried again at the next
 * interval. `stop()` ends it; a running audit finishes, and its result is dropped.
 */
export class BackgroundAudit {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  readonly state: BackgroundAuditState;

  constructor(
    private readonly deps: {
      config: Config;
      journal: JournalStore;
      effects: Effects;
      now: () => number;
      intervalMs: number;
    },
  ) {
    this.state = { intervalMs: deps.intervalMs, windowMs: BACKGROUND_AUDIT_WINDOW_MS, error: null };
  }

  start(): this {
    this.schedule(Math.min(FIRST_AUDIT_MS, this.deps.intervalMs));
    return this;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** One audit now (the timer's, or a test's), remembered for the overview. */
  async runOnce(): Promise<AuditReport | undefined> {
    const { config, journal, effects, now } = this.deps;
    try {
      const report = await buildAudit(config, journal, effects, now() - this.state.windowMs);
      if (this.stopped) return undefined;
      rememberAudit(journal, report, isAuditClean(report), now(), "background");
      this.state.error = null;
      return report;
    } catch (e) {
      if (!this.stopped) this.state.error = { at: now(), message: (e as Error).message };
      return undefined;
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.runOnce().then(() => this.schedule(this.deps.intervalMs));
    }, ms);
    // The console's server keeps the process alive, never this timer.
    this.timer.unref();
  }
}
