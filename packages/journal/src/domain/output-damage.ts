import { type AgentOutput, AgentOutputSchema, IdemError, issuePath, sha256Hex } from "@idem/schema";
import type { DamagedOutput, OutputRecord, OutputSummary } from "../port/outputs.js";
import type { OutputRowShape } from "./records.js";
import type { RunState } from "./states.js";

/** The runbook entry every damaged output names. */
export const DAMAGED_OUTPUT_ENTRY = 'docs/runbook.md, "A damaged output"';

/**
 * What the store hands back is distrusted, row by row (issue 42): an `outputs` row is an output
 * only when its body is the bytes its content hash was taken of (a damaged byte inside a text value
 * passes SQLite's integrity check, and a row edited by hand keeps its old hash), parses as JSON,
 * matches the AgentOutput shape, and names the job and agent of its row. Anything else is a
 * damaged output: its problem, never its body.
 */
export function outputDamage(r: OutputRowShape): { problem: string } | { output: AgentOutput } {
  if (typeof r.body !== "string") return { problem: "its body is not text" };
  if (sha256Hex(r.body) !== r.content_hash)
    return { problem: "its body is not what was recorded (it does not match its content hash)" };
  let value: unknown;
  try {
    value = JSON.parse(r.body);
  } catch (e) {
    // The parser's message may quote the body: only where it stopped is kept.
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    return {
      problem: `its body is not JSON (${at === undefined ? "it ends too early" : `at character ${at}`} of ${r.body.length})`,
    };
  }
  const shape = AgentOutputSchema.safeParse(value);
  if (!shape.success) {
    const first = shape.error.issues[0];
    const where = first ? issuePath(first.path as (string | number)[]) : "";
    return {
      problem: `its body is not an agent output (${where || "(root)"}: ${first?.message ?? "invalid"})`,
    };
  }
  const output = value as AgentOutput;
  if (output.jobId !== r.job_id || output.agent !== r.agent)
    return { problem: "its body names another job or agent than its row" };
  return { output };
}

/** An `outputs` row as an output record, or as a damaged output when it cannot be trusted. */
export function readOutput(r: OutputRowShape): OutputRecord | DamagedOutput {
  const read = outputDamage(r);
  if ("problem" in read)
    return {
      seq: r.seq,
      jobId: r.job_id,
      agent: r.agent,
      recordedAt: r.recorded_at,
      problem: read.problem,
    };
  return {
    seq: r.seq,
    jobId: r.job_id,
    agent: r.agent,
    contentHash: r.content_hash,
    output: read.output,
    source: r.source,
    recordedAt: r.recorded_at,
    ...(r.traceparent === null ? {} : { traceparent: r.traceparent }),
  };
}

/** Whether a read output is damaged. */
export const isDamaged = (o: OutputRecord | DamagedOutput): o is DamagedOutput => "problem" in o;

/** What a damaged output's run and messages say: the job, the problem and the runbook entry. */
export const damageMessage = (d: Pick<DamagedOutput, "jobId" | "problem">): string =>
  `the recorded output of job ${d.jobId} is damaged: ${d.problem}; it is not interpreted. See ${DAMAGED_OUTPUT_ENTRY}`;

/**
 * An `outputs` row as an output record, distrusted (see `readOutput`).
 * @throws INTEGRITY naming the job and the runbook entry when the row is damaged.
 */
export function toOutput(r: OutputRowShape): OutputRecord {
  const o = readOutput(r);
  if (isDamaged(o))
    throw new IdemError("INTEGRITY", damageMessage(o), {
      details: { jobId: o.jobId, reason: "damaged-output", problem: o.problem },
    });
  return o;
}

/** One line of `outputs.list` from an `outputs` row and its latest run; a damaged row says so. */
export function outputSummary(
  r: OutputRowShape,
  run: { generation: number; state: RunState },
): OutputSummary {
  const o = readOutput(r);
  return {
    seq: r.seq,
    jobId: r.job_id,
    agent: r.agent,
    effects: isDamaged(o) ? 0 : o.output.effects.length,
    recordedAt: r.recorded_at,
    generation: run.generation,
    state: run.state,
    ...(isDamaged(o) && { damaged: o.problem }),
  };
}
