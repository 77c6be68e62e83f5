import type { JournalStore, OutputsPage as PageOf, ReplaySelection } from "@idem/journal";
import type { RunState } from "@idem/schema";

/** One row of the console's outputs list: an output with its latest run. */
export interface OutputRow {
  seq: number;
  jobId: string;
  agent: string;
  source: string;
  recordedAt: number;
  effects: number;
  summary: string | null;
  generation: number | null;
  state: RunState | null;
}

/** A page of outputs and the cursor of the next one (undefined on the last page). */
export interface OutputsPage {
  rows: OutputRow[];
  /** Newest first: the next page is `before` this seq. */
  nextBeforeSeq?: number | undefined;
  /** Oldest first (`after`): the next page is after this seq. */
  nextAfterSeq?: number | undefined;
}

/** What the outputs list filters on. */
export interface OutputsFilter {
  agent?: string;
  state?: RunState;
  since?: number;
}

/**
 * One page of outputs, newest first before seq `beforeSeq` (or in recording order after
 * `afterSeq`), filtered by agent, the latest run's state and a recording time (the journal's
 * `outputs.page`), with each one's latest run (`runs.latestOf`). Reads `limit + 1` outputs to
 * know whether a next page exists; never more. Read-only; journal errors propagate.
 */
export async function listOutputsPage(
  journal: JournalStore,
  filter: OutputsFilter,
  page: PageOf,
): Promise<OutputsPage> {
  const selection: ReplaySelection = {
    ...(filter.agent !== undefined && { agent: filter.agent }),
    ...(filter.state !== undefined && { state: filter.state }),
    ...(filter.since !== undefined && { since: filter.since }),
  };
  if (Object.keys(selection).length === 0) selection.all = true;
  const limit = Math.max(1, Math.floor(page.limit));
  const outputs = await journal.outputs.page(selection, { ...page, limit: limit + 1 });
  const shown = outputs.slice(0, limit);
  const latest = await journal.runs.latestOf(shown.map((o) => o.jobId));
  const rows = shown.map((o) => {
    const run = latest.get(o.jobId);
    return {
      seq: o.seq,
      jobId: o.jobId,
      agent: o.agent,
      source: o.source,
      recordedAt: o.recordedAt,
      effects: o.output.effects.length,
      summary: o.output.summary ?? null,
      generation: run?.generation ?? null,
      state: run?.state ?? null,
    };
  });
  const last = shown[shown.length - 1];
  const next = outputs.length > limit && last ? last.seq : undefined;
  return "beforeSeq" in page ? { rows, nextBeforeSeq: next } : { rows, nextAfterSeq: next };
}
