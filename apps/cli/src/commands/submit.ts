import { statSync } from "node:fs";
import { oversizedSubmission, type SubmitResult, submitText } from "@idem/core";
import type { Command } from "commander";
import {
  CliError,
  color,
  EXIT,
  exitHolder,
  loadConfig,
  printJson,
  readText,
  withJournal,
} from "../context.js";

export function register(program: Command): void {
  program
    .command("submit")
    .description(
      "record an AgentOutput from FILE or - (stdin): recorded, duplicate, conflict or invalid",
    )
    .argument("<file>", "the AgentOutput JSON file, or - for stdin")
    .option("--json", "print JSON")
    .action(async (file: string, opts: { json?: boolean; config?: string }) => {
      const config = loadConfig(opts);
      if (file !== "-") {
        try {
          const size = statSync(file).size;
          if (size > config.limits.maxOutputBytes) {
            report(oversizedSubmission(file, size, config.limits.maxOutputBytes), opts.json);
            return;
          }
        } catch (e) {
          throw new CliError(
            `cannot read output ${file}: ${(e as { code?: string }).code ?? (e as Error).message}`,
          );
        }
      }
      const text = readText(file, "output");
      const answer = await withJournal(config, (journal) =>
        submitText(journal, config, text, "cli"),
      );
      report(answer, opts.json);
    });
}

function report(answer: SubmitResult, json?: boolean): void {
  exitHolder.code =
    answer.status === "recorded" || answer.status === "duplicate" ? EXIT.OK : EXIT.FAILED;
  if (json) {
    printJson(answer);
    return;
  }
  const who = answer.jobId ?? "(no job id)";
  switch (answer.status) {
    case "recorded":
      process.stdout.write(`${color.green("recorded")} ${who}\n`);
      break;
    case "duplicate":
      process.stdout.write(
        `${color.yellow("duplicate")} ${who}: the same output is recorded already, nothing written\n`,
      );
      break;
    case "conflict":
      process.stdout.write(
        `${color.red("conflict")} ${who}: a different output is recorded for this job; first write wins, this one is kept in rejections\n`,
      );
      break;
    case "invalid":
      process.stderr.write(`${color.red("invalid")} ${who}: nothing written\n`);
      for (const i of answer.issues ?? [])
        process.stderr.write(`  ${i.path || "(output)"}: ${i.message}\n`);
      break;
  }
}
