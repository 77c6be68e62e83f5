import { type JobView, showArchivedJob, showJob } from "@idem/core";
import type { Command } from "commander";
import { formatTime, loadConfig, printJson, table, withJournal } from "../context.js";

export function register(program: Command): void {
  program
    .command("show")
    .description("an output, its runs, its effects with their state, and its events")
    .argument("<job>", "job ID")
    .option("--archive", "read it from the archive written by idem prune")
    .option("--json", "print JSON")
    .action(async (jobId: string, opts: { archive?: boolean; json?: boolean; config?: string }) => {
      const config = loadConfig(opts);
      const data: JobView = opts.archive
        ? showArchivedJob(config.journal.archiveDir, jobId)
        : await withJournal(config, (j) => showJob(j, jobId));
      if (opts.json) {
        printJson(data);
        return;
      }
      const o = data.output;
      process.stdout.write(
        `job ${o.jobId}  agent ${o.agent}  source ${o.source}  recorded ${formatTime(o.recordedAt)}${data.archived ? "  (archived)" : ""}\n` +
          `content ${o.contentHash}\n${o.output.summary ? `summary: ${o.output.summary}\n` : ""}`,
      );
      process.stdout.write(
        `runs\n${table(
          ["gen", "state", "attempts", "lease expiries", "class", "last error"],
          data.runs.map((r) => [
            r.generation,
            r.state,
            r.attempts,
            r.leaseExpiries,
            r.class,
            r.lastError,
          ]),
        )}\n`,
      );
      process.stdout.write(
        `effects\n${table(
          ["key", "gen", "kind", "state", "detail"],
          data.effects.map((e) => [
            e.key,
            e.generation,
            e.kind,
            e.state,
            e.detail ? JSON.stringify(e.detail) : "",
          ]),
        )}\n`,
      );
      process.stdout.write(
        `events\n${table(
          ["at", "type", "actor", "data"],
          data.events.map((e) => [
            formatTime(e.at),
            e.type,
            e.actor,
            e.data ? JSON.stringify(e.data).slice(0, 80) : "",
          ]),
        )}\n`,
      );
    });
}
