import type { OutputSummary } from "@idem/journal";
import type { RunState } from "@idem/schema";
import { formatTime, loadConfig, printJson, table } from "../context.js";
import { withExistingJournal } from "../ops/existing-journal.js";
import { sinceOption, stateOption } from "../options.js";
import { terminalText } from "../render/terminal-text.js";

/** `idem ls`, imported when it runs (its options and help: commands/ls.ts). */
export async function runLs(opts: {
  state?: string;
  agent?: string;
  since?: string;
  limit?: number;
  json?: boolean;
  config?: string;
}): Promise<void> {
  const config = loadConfig(opts);
  const filter = {
    ...(opts.state !== undefined && { state: stateOption(opts.state) as RunState }),
    ...(opts.agent !== undefined && { agent: opts.agent }),
    ...(opts.since !== undefined && { since: sinceOption(opts.since) as number }),
    ...(opts.limit !== undefined && { limit: opts.limit }),
  };
  // Read-only: it never waits on (or fails for) a write lock another process holds.
  const rows = await withExistingJournal(config, (j) => j.outputs.list(filter));
  if (opts.json) {
    printJson(rows);
    return;
  }
  process.stdout.write(
    `${table(
      ["job", "agent", "effects", "gen", "state", "recorded"],
      rows.map((r) => [
        r.jobId,
        r.agent,
        r.damaged === undefined ? r.effects : "DAMAGED",
        r.generation,
        r.state,
        formatTime(r.recordedAt),
      ]),
    )}\n${rows.length} output(s)\n${damagedNote(rows)}`,
  );
}

/** Names the damaged outputs of a listing and where the runbook says what to do. */
function damagedNote(rows: readonly OutputSummary[]): string {
  const damaged = rows.filter((r) => r.damaged !== undefined);
  if (damaged.length === 0) return "";
  const lines = damaged.slice(0, 10).map((r) => `  ${terminalText(`${r.jobId}: ${r.damaged}`)}`);
  if (damaged.length > 10) lines.push(`  ... and ${damaged.length - 10} more`);
  return `${damaged.length} damaged (never interpreted; idem doctor lists them all, docs/runbook.md "A damaged output"):\n${lines.join("\n")}\n`;
}
