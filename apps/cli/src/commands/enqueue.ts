import { enqueueJob } from "@idem/executor";
import { connectNats, createJobPublisher, ensureJobsStream } from "@idem/nats";
import { validateJob } from "@idem/schema";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { Command } from "commander";
import {
  CliError,
  color,
  EXIT,
  loadConfig,
  parseJsonText,
  printJson,
  readText,
  withJournal,
} from "../context.js";

export function register(program: Command): void {
  program
    .command("enqueue")
    .description(
      "enqueues a Job from FILE or - (JetStream with Nats-Msg-Id = jobId, or the embedded queue); a duplicate is ok",
    )
    .argument("<file>", "the Job JSON file, or - for stdin")
    .option("--json", "print JSON")
    .action(async (file: string, opts: { json?: boolean }, cmd: Command) => {
      const config = loadConfig(cmd.optsWithGlobals());
      const raw = parseJsonText(readText(file, "job"), file);
      const v = validateJob(raw);
      if (!v.ok) {
        const lines = v.issues.map((i) => `  ${i.path || "(job)"}: ${i.message}`).join("\n");
        throw new CliError(
          `invalid job ${file}: nothing enqueued\n${lines}`,
          EXIT.FAILED,
          v.issues,
        );
      }
      const job = v.value;
      const outcome = await withJournal(config, async (journal) => {
        if (!config.nats) return enqueueJob(job, { journal });
        const nc = await connectNats(config.nats.url, "idem enqueue");
        try {
          await ensureJobsStream(await jetstreamManager(nc), config.nats);
          const publisher = createJobPublisher({ js: jetstream(nc), nats: config.nats });
          return await enqueueJob(job, { journal, publisher });
        } finally {
          await nc.drain().catch(() => {});
        }
      });
      if (opts.json) {
        printJson(outcome);
        return;
      }
      process.stdout.write(
        outcome.duplicate
          ? `${color.yellow("duplicate")} ${outcome.jobId}: already enqueued (${outcome.stream} seq ${outcome.seq}), nothing new\n`
          : `${color.green("enqueued")} ${outcome.jobId} (${outcome.stream} seq ${outcome.seq})\n`,
      );
    });
}
