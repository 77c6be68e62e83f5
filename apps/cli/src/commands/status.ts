import { readStatus } from "@idem/core";
import { EFFECT_STATES, RUN_STATES } from "@idem/journal";
import type { Command } from "commander";
import { loadConfig, printJson, table, withJournal } from "../context.js";

export function register(program: Command): void {
  program
    .command("status")
    .description(
      "counts of outputs, latest runs by state, effects by state, rejections and dead letters",
    )
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean; config?: string }) => {
      const config = loadConfig(opts);
      const s = await withJournal(config, readStatus);
      if (opts.json) {
        printJson(s);
        return;
      }
      process.stdout.write(
        `${table(["outputs", "rejections", "dead letters", "jobs queued", "jobs running", "jobs done", "jobs dead"], [[s.outputs, s.rejections, s.deadLetters, s.jobs.queued, s.jobs.running, s.jobs.done, s.jobs.dead]])}\n`,
      );
      process.stdout.write(
        `runs (latest per output)\n${table([...RUN_STATES], [RUN_STATES.map((k) => s.runs[k])])}\n`,
      );
      process.stdout.write(
        `effects\n${table([...EFFECT_STATES], [EFFECT_STATES.map((k) => s.effects[k])])}\n`,
      );
    });
}
