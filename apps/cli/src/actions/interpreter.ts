import { runInterpreterProcess } from "@idem/interpreter";
import type { Command } from "commander";
import { CliError, EXIT, exitHolder, loadConfigWithKinds } from "../context.js";
import { logFormatOption } from "../options.js";
import { jsonText } from "../render/terminal-text.js";
import { faultHook } from "./executor.js";

interface InterpreterCommandOptions {
  once?: boolean;
  concurrency?: string;
  json?: boolean;
  config?: string;
  logFormat?: string;
}

/** `idem interpreter`, imported when it runs (its options and help: commands/interpreter.ts). */
export async function runInterpreter(
  opts: InterpreterCommandOptions,
  command: Command,
): Promise<void> {
  const logFormat = logFormatOption(opts.logFormat);
  // --config may be taken by the program-level option when it follows the subcommand.
  const config = await loadConfigWithKinds({ ...command.optsWithGlobals(), ...opts });
  const concurrency = Number(opts.concurrency ?? "1");
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
    throw new CliError(
      `--concurrency must be an integer from 1 to 256, got ${opts.concurrency}`,
      EXIT.USAGE,
    );
  }
  const result = await runInterpreterProcess(config, {
    once: opts.once === true,
    concurrency,
    logFormat,
    fault: faultHook(),
    // A first clone of a remote's mirror shows its progress on a terminal.
    ...(process.stderr.isTTY
      ? {
          onProgress: (what: string, stage: string, percent: number) =>
            process.stderr.write(`\r${what}: ${stage} ${percent}%   `),
        }
      : {}),
  });
  // Without --once it ran until a stop; with it, undefined when told to stop while it waited.
  if (!result) return;
  if (opts.json) {
    process.stdout.write(`${jsonText(result, 0)}\n`);
  } else {
    const r = result.runs;
    process.stdout.write(
      `interpreter: ${r.done} done, ${r.failed} retries scheduled, ${r.dead} dead, ${r.released} released, ${r["lease-lost"]} lost to another holder\n`,
    );
    for (const d of result.dead) {
      process.stdout.write(`  dead: ${d.jobId}#${d.generation} (${d.class}) ${d.error}\n`);
    }
  }
  exitHolder.code = result.endedDead ? EXIT.FAILED : EXIT.OK;
}
