import type { PendingRestore } from "@idem/core";
import { color } from "../context.js";

/**
 * A restore whose recovery is not done, as `idem jobs` and `idem audit` say it first: when, from
 * which backup, where the journal that was there is kept, what it holds that this one lacks, and
 * what to do (docs/runbook.md, "Restore a journal from a backup").
 */
export function renderPendingRestore(r: PendingRestore): string {
  const m = r.missing;
  const lacks =
    m === null
      ? "it cannot be read"
      : `it holds ${m.outputs.recorded.length} output(s) and ${m.jobs.enqueued.length} waiting job(s) this journal lacks${m.jobs.enqueued.length > 0 ? ` (${m.jobs.enqueued.slice(0, 10).join(" ")}${m.jobs.enqueued.length > 10 ? " ..." : ""})` : ""}`;
  return `${color.yellow("restored")} ${r.at} from ${r.backup}; the journal that was there is kept at ${r.kept ?? "(none: it was lost)"}: ${lacks}\n  ${r.fix}\n`;
}
