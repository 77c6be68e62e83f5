import { RUN_STATES, type RunState } from "@idem/journal";
import type { Command } from "commander";
import { formatTime, loadConfig, printJson, table, withJournal } from "../context.js";
import { sinceOption, stateOption } from "../options.js";

export function register(program: Command): void {
  program
    .command("ls")
    .description("outputs with their latest run state")
    .option("--state <state>", `latest run state: ${RUN_STATES.join(", ")}`)
    .option("--agent <agent>", "only this agent's outputs")
    .option("--since <time>", "recorded since an ISO-8601 time or a duration back (15m, 2h, 7d)")
    .option("--limit <n>", "at most n rows", (v) => Number.parseInt(v, 10))
    .option("--json", "print JSON")
    .action(
      async (opts: {
        state?: string;
        agent?: string;
        since?: string;
        limit?: number;
        json?: boolean;
        config?: string;
      }) => {
        const config = loadConfig(opts);
        const filter = {
          ...(opts.state !== undefined && { state: stateOption(opts.state) as RunState }),
          ...(opts.agent !== undefined && { agent: opts.agent }),
          ...(opts.since !== undefined && { since: sinceOption(opts.since) as number }),
          ...(opts.limit !== undefined && { limit: opts.limit }),
        };
        const rows = await withJournal(config, (j) => j.outputs.list(filter));
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
      },
    );
}
