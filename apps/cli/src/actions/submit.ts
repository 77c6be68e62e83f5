import { statSync } from "node:fs";
import {
  assertOwnJobs,
  type OutputFile,
  type OutputFileProblems,
  oversizedSubmission,
  parseOutputFile,
  type SubmitResult,
  submitOutputs,
  submitText,
} from "@idem/core";
import type { JournalStore } from "@idem/journal";
import { type AgentOutput, type Config, isIdemError } from "@idem/schema";
import {
  CliError,
  capped,
  color,
  EXIT,
  exitHolder,
  loadConfigWithKinds,
  printJson,
  readText,
  withJournal,
} from "../context.js";
import { progressBar } from "../render/progress-bar.js";
import { terminalText } from "../render/terminal-text.js";

/** A batch this large gets a progress bar on a terminal. */
const PROGRESS_FROM = 50;

/** `idem submit`, imported when it runs (its options and help: commands/submit.ts). */
export async function runSubmit(
  file: string,
  opts: { json?: boolean; config?: string },
): Promise<void> {
  const config = await loadConfigWithKinds(opts);
  const size = file === "-" ? undefined : sizeOf(file);
  const text = readText(file, "output");
  const parsed = readOutputFile(text, file, config, opts.json);
  if (parsed === undefined) return;
  if (!parsed.batch) {
    // One output: the single submit answer of docs/cli.md, as before batches existed.
    if (size !== undefined && size > config.limits.maxOutputBytes) {
      report(oversizedSubmission(file, size, config.limits.maxOutputBytes), opts.json);
      return;
    }
    const answer = await withJournal(config, (journal) => submitText(journal, config, text, "cli"));
    report(answer, opts.json);
    return;
  }
  const results = await withJournal(config, async (journal) => {
    // Another agent's job in the batch refuses it whole, as every other problem does.
    try {
      await assertOwnJobs(journal, parsed, file);
    } catch (e) {
      refuseBatch(e, opts.json);
      return undefined;
    }
    return submitBatch(journal, config, parsed.outputs);
  });
  if (results) reportBatch(results, parsed.where, opts.json);
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch (e) {
    throw new CliError(
      `cannot read output ${file}: ${(e as { code?: string }).code ?? (e as Error).message}`,
    );
  }
}

/**
 * The outputs of FILE. A refused batch exits 1 having recorded nothing: its problems listed under
 * the message, or with `--json` one `invalid` answer per output (then `undefined`).
 */
function readOutputFile(
  text: string,
  file: string,
  config: Config,
  json?: boolean,
): OutputFile | undefined {
  try {
    return parseOutputFile(text, file, config);
  } catch (e) {
    refuseBatch(e, json);
    return undefined;
  }
}

/**
 * A batch refused before anything was recorded (INVALID_INPUT with OutputFileProblems): exit 1,
 * its problems listed under the message, or with `--json` one `invalid` answer per output.
 * @throws anything else as it is.
 */
function refuseBatch(e: unknown, json?: boolean): void {
  if (!isIdemError(e, "INVALID_INPUT")) throw e;
  const { problems, answers } = e.details as unknown as OutputFileProblems;
  if (!json) {
    throw new CliError(`${e.message}\n${capped(problems).join("\n")}`, EXIT.FAILED, problems);
  }
  exitHolder.code = EXIT.FAILED;
  printJson(answers);
}

/** Records a checked batch, with a progress bar on stderr when it is a terminal and the batch large. */
async function submitBatch(
  journal: JournalStore,
  config: Config,
  outputs: AgentOutput[],
): Promise<SubmitResult[]> {
  const bar =
    process.stderr.isTTY && outputs.length >= PROGRESS_FROM
      ? await progressBar("recording [{bar}] {value}/{total} outputs | {eta_formatted} left")
      : undefined;
  bar?.start(outputs.length, 0);
  let settled = 0;
  try {
    return await submitOutputs(journal, config, outputs, "cli", {
      onSettled: () => bar?.update(++settled),
    });
  } finally {
    bar?.stop();
  }
}

/** Exit 0 when every output is recorded or a duplicate, 1 when any is a conflict or invalid. */
const failed = (r: SubmitResult) => r.status === "conflict" || r.status === "invalid";

function report(answer: SubmitResult, json?: boolean): void {
  exitHolder.code = failed(answer) ? EXIT.FAILED : EXIT.OK;
  if (json) {
    printJson(answer);
    return;
  }
  // What the output says (a job ID that may be invalid, the paths of its issues) is the agent's.
  const who = terminalText(answer.jobId ?? "(no job id)");
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
        process.stderr.write(
          `  ${terminalText(i.path || "(output)")}: ${terminalText(i.message)}\n`,
        );
      break;
  }
}

/**
 * `--json`: one submit answer per output in file order. People get counts, then each output that
 * was not recorded or a duplicate, with where it is in the file.
 */
function reportBatch(results: SubmitResult[], where: string[], json?: boolean): void {
  exitHolder.code = results.some(failed) ? EXIT.FAILED : EXIT.OK;
  if (json) {
    printJson(results);
    return;
  }
  const count = (status: SubmitResult["status"]) =>
    results.filter((r) => r.status === status).length;
  const parts = [
    `${color.green("recorded")} ${count("recorded")}`,
    `${color.yellow("duplicate")} ${count("duplicate")}`,
  ];
  if (count("conflict") > 0)
    parts.push(
      `${color.red("conflict")} ${count("conflict")} (first write wins; kept in rejections)`,
    );
  if (count("invalid") > 0) parts.push(`${color.red("invalid")} ${count("invalid")}`);
  process.stdout.write(`${results.length} outputs: ${parts.join(", ")}\n`);
  const refused = results.flatMap((r, i) =>
    failed(r)
      ? [
          `${where[i]}: ${r.status} ${r.jobId ?? ""}${(r.issues ?? []).map((x) => `; ${x.path || "(output)"}: ${x.message}`).join("")}`,
        ]
      : [],
  );
  for (const line of capped(refused)) process.stdout.write(`${line}\n`);
}
