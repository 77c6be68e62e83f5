import type { StuckHolder } from "@idem/core";
import { formatTime, table } from "../context.js";

/**
 * The processes holding a lock or a lease past their time, as `idem status` and `idem jobs` show
 * them: what each holds, which process (pid, host), its state and since when, and what to do.
 * Empty text when there is none.
 */
export function renderStuckHolders(holders: readonly StuckHolder[]): string {
  if (holders.length === 0) return "";
  return `held past its time (docs/runbook.md, "A hung process")\n${table(
    ["holds", "process", "state", "since", "what to do"],
    holders.map((h) => [
      h.holds,
      h.pid === null ? "" : `pid ${h.pid}${h.host ? ` on ${h.host}` : ""}`,
      h.state,
      formatTime(h.since),
      h.fix,
    ]),
  )}\n`;
}
