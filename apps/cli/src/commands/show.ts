import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ArchivedOutput } from "@idem/journal";
import type { Command } from "commander";
import { formatTime, loadConfig, notFound, printJson, table, withJournal } from "../context.js";

interface ShowData {
  output: unknown;
  runs: unknown[];
  effects: { key: string; generation: number; kind: string; state: string; detail: unknown }[];
  events: unknown[];
  rejections?: unknown[];
  archived?: boolean;
}

/** Looks a job up in the JSONL archive that `idem prune` writes (one ArchivedOutput per line). */
export function findInArchive(dir: string, jobId: string): ArchivedOutput | undefined {
  if (!existsSync(dir)) return undefined;
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort()) {
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (line === "" || !line.includes(JSON.stringify(jobId))) continue;
      const entry = JSON.parse(line) as ArchivedOutput;
      if (entry.output.jobId === jobId) return entry;
    }
  }
  return undefined;
}

export function register(program: Command): void {
  program
    .command("show")
    .description("an output, its runs, its effects with their state, and its events")
    .argument("<job>", "job ID")
    .option("--archive", "read it from the archive written by idem prune")
    .option("--json", "print JSON")
    .action(async (jobId: string, opts: { archive?: boolean; json?: boolean; config?: string }) => {
      const config = loadConfig(opts);
      let data: ShowData;
      if (opts.archive) {
        const entry =
          findInArchive(config.journal.archiveDir, jobId) ??
          notFound(`job ${jobId} is not in the archive`);
        data = {
          output: entry.output,
          runs: entry.runs,
          effects: entry.effects.map((e) => ({
            key: e.key,
            generation: e.generation,
            kind: e.kind,
            state: e.state,
            detail: e.detail,
          })),
          events: entry.events,
          rejections: entry.rejections,
          archived: true,
        };
      } else {
        data = await withJournal(config, async (j) => {
          const output = (await j.get(jobId)) ?? notFound(`no output recorded for job ${jobId}`);
          const effects = await j.effects(jobId);
          return {
            output,
            runs: await j.runs.forJob(jobId),
            effects: effects.map((e) => ({
              key: e.key,
              generation: e.generation,
              kind: e.kind,
              state: e.state,
              detail: e.detail,
            })),
            events: await j.events.list({ jobId }),
            rejections: await j.rejections(jobId),
          };
        });
      }
      if (opts.json) {
        printJson(data);
        return;
      }
      const o = data.output as {
        jobId: string;
        agent: string;
        recordedAt: number;
        source: string;
        contentHash: string;
        output: { summary?: string };
      };
      process.stdout.write(
        `job ${o.jobId}  agent ${o.agent}  source ${o.source}  recorded ${formatTime(o.recordedAt)}${data.archived ? "  (archived)" : ""}\n` +
          `content ${o.contentHash}\n${o.output.summary ? `summary: ${o.output.summary}\n` : ""}`,
      );
      const runs = data.runs as {
        generation: number;
        state: string;
        attempts: number;
        leaseExpiries: number;
        class: string | null;
        lastError: string | null;
      }[];
      process.stdout.write(
        `runs\n${table(
          ["gen", "state", "attempts", "lease expiries", "class", "last error"],
          runs.map((r) => [
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
      const events = data.events as { at: number; type: string; actor: string; data: unknown }[];
      process.stdout.write(
        `events\n${table(
          ["at", "type", "actor", "data"],
          events.map((e) => [
            formatTime(e.at),
            e.type,
            e.actor,
            e.data ? JSON.stringify(e.data).slice(0, 80) : "",
          ]),
        )}\n`,
      );
    });
}
