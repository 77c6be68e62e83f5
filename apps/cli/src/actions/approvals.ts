import { type ApprovalResult, decideApproval } from "@idem/core";
import { systemClock } from "@idem/schema";
import { CliError, EXIT, formatTime, loadConfig, printJson, withJournal } from "../context.js";
import { personOf } from "../ops/person.js";

type DecideOptions = {
  effects?: string;
  reason?: string;
  as?: string;
  json?: boolean;
  config?: string;
};

/** `--effects 1,2`: indexes in the output. */
function effectsOption(list: string | undefined): number[] | undefined {
  if (list === undefined) return undefined;
  const parts = list.split(",").map((p) => p.trim());
  if (parts.some((p) => !/^\d+$/.test(p)))
    throw new CliError(
      `--effects ${JSON.stringify(list)}: give effect indexes separated by commas (1,2)`,
      EXIT.USAGE,
    );
  return parts.map(Number);
}

async function decide(jobId: string, approve: boolean, opts: DecideOptions): Promise<void> {
  if (opts.reason === undefined || opts.reason.trim() === "")
    throw new CliError("--reason is required: say why, it is recorded", EXIT.USAGE);
  const effects = effectsOption(opts.effects);
  const config = loadConfig(opts);
  const result = await withJournal(config, (j) =>
    decideApproval(j, config.approvals, systemClock, {
      jobId,
      approve,
      reason: opts.reason as string,
      actor: personOf(opts.as),
      effects,
    }),
  );
  if (opts.json) printJson(result);
  else process.stdout.write(line(result));
}

/** One line for people. */
function line(r: ApprovalResult): string {
  const who = `by ${r.actor}: ${r.reason}`;
  return r.decision === "approved"
    ? `${r.jobId}#${r.generation}: effects ${r.effects.join(",")} approved (${who}); usable until ${formatTime(r.expiresAt)}, the interpreter applies them once\n`
    : `${r.jobId}#${r.generation}: rejected (${who}); the run is dead (class rejected), nothing awaited was applied\n`;
}

/** `idem approve`, imported when it runs (its options and help: commands/approvals.ts). */
export const runApprove = (jobId: string, opts: DecideOptions) => decide(jobId, true, opts);

/** `idem reject`, imported when it runs (its options and help: commands/approvals.ts). */
export const runReject = (jobId: string, opts: DecideOptions) => decide(jobId, false, opts);
