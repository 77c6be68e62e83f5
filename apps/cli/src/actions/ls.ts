import type { RunState } from "@idem/schema";
import { formatTime, loadConfig, printJson, table } from "../context.js";
import { withExistingJournal } from "../ops/existing-journal.js";
import { sinceOption, stateOption } from "../options.js";

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
        r.effects,
        r.generation,
        r.state,
        formatTime(r.recordedAt),
      ]),
    )}\n${rows.length} output(s)\n`,
  );
}
