import { readStatus } from "@idem/core";
import { EFFECT_STATES, RUN_STATES } from "@idem/schema";
import { loadConfig, printJson, table, withJournal } from "../context.js";

/** `idem status`, imported when it runs (its options and help: commands/status.ts). */
export async function runStatus(opts: { json?: boolean; config?: string }): Promise<void> {
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
}
