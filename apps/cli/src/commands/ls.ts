import { RUN_STATES, type RunState } from "@idem/journal";
import { parseSince } from "@idem/schema";
import type { Command } from "commander";
import {
  CliError,
  EXIT,
  formatTime,
  loadConfig,
  printJson,
  table,
  withJournal,
} from "../context.js";

/** Parses a --since value (ISO-8601 or a duration back from now), exit 2 when it is neither. */
export function sinceOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseSince(value, Date.now());
  } catch (e) {
    throw new CliError(`--since: ${(e as Error).message}`, EXIT.USAGE);
  }
}

export function stateOption(value: string | undefined): RunState | undefined {
  if (value === undefined) return undefined;
  if (!(RUN_STATES as readonly string[]).includes(value)) {
    throw new CliError(`--state: "${value}" is not one of ${RUN_STATES.join(", ")}`, EXIT.USAGE);
  }
  return value as RunState;
}

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
        const rows = await withJournal(config, (j) => j.list(filter));
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
