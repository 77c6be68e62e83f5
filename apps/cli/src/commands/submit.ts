import { statSync } from "node:fs";
import type { JournalStore } from "@idem/journal";
import { type Config, effectTargets, type ValidationIssue, validateOutput } from "@idem/schema";
import type { Command } from "commander";
import {
  CliError,
  color,
  EXIT,
  exitHolder,
  loadConfig,
  parseJsonText,
  printJson,
  readText,
  withJournal,
} from "../context.js";

export type SubmitStatus = "recorded" | "duplicate" | "conflict" | "invalid";
export interface SubmitAnswer {
  status: SubmitStatus;
  jobId: string | null;
  issues?: ValidationIssue[];
  seq?: number;
  contentHash?: string;
}

/** Validates raw submitted text and records it; an invalid submission writes nothing. */
export async function submitText(
  text: string,
  source: string,
  config: Config,
  journal: JournalStore,
): Promise<SubmitAnswer> {
  const size = Buffer.byteLength(text, "utf8");
  if (size > config.limits.maxOutputBytes) {
    return {
      status: "invalid",
      jobId: null,
      issues: [
        {
          path: "",
          message: `output is ${size} bytes; limits.maxOutputBytes is ${config.limits.maxOutputBytes}`,
        },
      ],
    };
  }
  let raw: unknown;
  try {
    raw = parseJsonText(text, source);
  } catch (e) {
    return {
      status: "invalid",
      jobId: null,
      issues: [{ path: "", message: (e as Error).message }],
    };
  }
  const jobId =
    typeof (raw as { jobId?: unknown })?.jobId === "string"
      ? (raw as { jobId: string }).jobId
      : null;
  const v = validateOutput(raw, config);
  if (!v.ok) return { status: "invalid", jobId, issues: v.issues };
  const r = await journal.record(v.value, {
    source: "cli",
    targets: effectTargets(v.value, config),
  });
  return r.status === "conflict"
    ? { status: "conflict", jobId: r.jobId, contentHash: r.contentHash }
    : { status: r.status, jobId: r.jobId, seq: r.seq, contentHash: r.contentHash };
}

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
            const answer: SubmitAnswer = {
              status: "invalid",
              jobId: null,
              issues: [
                {
                  path: "",
                  message: `${file} is ${size} bytes; limits.maxOutputBytes is ${config.limits.maxOutputBytes}`,
                },
              ],
            };
            report(answer, opts.json);
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
        submitText(text, file, config, journal),
      );
      report(answer, opts.json);
    });
}

function report(answer: SubmitAnswer, json?: boolean): void {
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
