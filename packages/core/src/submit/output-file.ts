import type { JournalStore } from "@idem/journal";
import {
  type AgentOutput,
  type Config,
  canonicalJson,
  describeJsonError,
  IdemError,
  parseStrictJson,
  type ValidationIssue,
} from "@idem/schema";
import { agentIssue } from "../record/record-output.js";
import { checkRecordable } from "../validate/index.js";
import type { SubmitResult } from "./submit-output.js";

/**
 * What an `idem submit` file holds: one output (handled as a single submission, so that its
 * answer stays the submit shape of docs/cli.md, idem submit) or a batch, every output of it already checked.
 */
export type OutputFile =
  | { batch: false }
  | {
      batch: true;
      /** The outputs in file order, each passed by `checkRecordable`. */
      outputs: AgentOutput[];
      /** Where each output is in the file: `line 3` (JSON Lines) or `[2]` (an array). */
      where: string[];
    };

/**
 * What {@link parseOutputFile} puts in the `details` of its `INVALID_INPUT` error: the file as
 * named by the caller, every problem for people, each naming its line (`line 3`) or index (`[2]`)
 * and field, and one submit answer per output in file order for `--json`: each `invalid`, with its
 * own issues, or with the reason it was not recorded either.
 */
export interface OutputFileProblems {
  file: string;
  problems: string[];
  answers: SubmitResult[];
}

/** A `.jsonl` or `.ndjson` file is JSON Lines, a batch even of one output (scripts get an array). */
const JSON_LINES_FILE = /\.(jsonl|ndjson)$/i;

/**
 * Reads the outputs of an `idem submit` file: one AgentOutput, a JSON array of them, or JSON
 * Lines (one per line; a `.jsonl` or `.ndjson` file always is). A single output (or text that is
 * no JSON at all) comes back as `{ batch: false }`, for the single submission path. A batch is
 * checked as a whole before anything is recorded: each line is JSON, each output is within
 * `limits.maxOutputBytes` and passes `checkRecordable` (the one gate of every surface), and no job
 * ID has two different outputs in the file. Pure: `file` only names the text (and tells JSON
 * Lines by its extension); nothing is read or written.
 * @throws INVALID_INPUT with {@link OutputFileProblems} as `details` when any output of a batch
 * is refused; its message ends in "nothing recorded".
 */
export function parseOutputFile(text: string, file: string, config: Config): OutputFile {
  const items = splitItems(text, file);
  if (items === undefined) return { batch: false };
  const issuesOf = items.map((item) => itemIssues(item, config));
  const outputs: AgentOutput[] = [];
  const where: string[] = [];
  const firstSeen = new Map<string, { where: string; content: string }>();
  items.forEach((item, n) => {
    const checked = issuesOf[n];
    if (checked === undefined || !("output" in checked)) return;
    const output = checked.output;
    const content = canonicalJson(output);
    const seen = firstSeen.get(output.jobId);
    if (seen && seen.content !== content) {
      const message = `job ${output.jobId} has another output than at ${seen.where} (first write wins)`;
      issuesOf[n] = { issues: [{ path: "", message }] };
      return;
    }
    if (!seen) firstSeen.set(output.jobId, { where: item.where, content });
    outputs.push(output);
    where.push(item.where);
  });
  const problems = items.flatMap((item, n) => {
    const checked = issuesOf[n];
    return checked && "issues" in checked
      ? checked.issues.map((i) => `${item.where}${i.path ? ` ${i.path}` : ""}: ${i.message}`)
      : [];
  });
  if (problems.length === 0) return { batch: true, outputs, where };
  const refused = issuesOf.filter((c) => c && "issues" in c).length;
  const answers = items.map((item, n): SubmitResult => {
    const checked = issuesOf[n];
    const issues: ValidationIssue[] =
      checked && "issues" in checked
        ? checked.issues
        : [
            {
              path: "",
              message: `not recorded: ${refused} other output(s) of the batch are refused`,
            },
          ];
    return { status: "invalid", jobId: jobIdOf(item.value), issues };
  });
  const details: OutputFileProblems = { file, problems, answers };
  return throwInvalid(`${problems.length} problem(s) in ${file}: nothing recorded`, details);
}

/**
 * The part of a batch's check that reads the journal: no output may answer a job the journal
 * knows as another agent's (`agentIssue`, what `recordOutput` refuses one by one), so that a batch
 * holding one is refused whole before anything is recorded, as every other problem is. Reads one
 * job row per output; writes nothing.
 * @throws INVALID_INPUT with {@link OutputFileProblems}, as {@link parseOutputFile} does.
 */
export async function assertOwnJobs(
  journal: JournalStore,
  batch: { outputs: readonly AgentOutput[]; where: readonly string[] },
  file: string,
): Promise<void> {
  const issues: (ValidationIssue | undefined)[] = [];
  for (const o of batch.outputs)
    issues.push(agentIssue(o, (await journal.jobs.get(o.jobId))?.agent));
  const refused = issues.filter((i) => i !== undefined).length;
  if (refused === 0) return;
  const problems = issues.flatMap((i, n) =>
    i ? [`${batch.where[n]} ${i.path}: ${i.message}`] : [],
  );
  const answers = batch.outputs.map(
    (o, n): SubmitResult => ({
      status: "invalid",
      jobId: o.jobId,
      issues: [
        issues[n] ?? {
          path: "",
          message: `not recorded: ${refused} other output(s) of the batch are refused`,
        },
      ],
    }),
  );
  throwInvalid(`${problems.length} problem(s) in ${file}: nothing recorded`, {
    file,
    problems,
    answers,
  });
}

function throwInvalid(message: string, details: OutputFileProblems): never {
  throw new IdemError("INVALID_INPUT", message, { details: { ...details } });
}

/** One item's own problems (not JSON, too large, not recordable), or its checked output. */
function itemIssues(
  item: Item,
  config: Config,
): { output: AgentOutput } | { issues: ValidationIssue[] } {
  const max = config.limits.maxOutputBytes;
  if (item.broken !== undefined) return { issues: [{ path: "", message: item.broken }] };
  if (item.bytes === undefined)
    return { issues: [{ path: "", message: "is nested too deeply to be an output" }] };
  if (item.bytes > max) {
    const message = `is ${item.bytes} bytes; limits.maxOutputBytes is ${max}`;
    return { issues: [{ path: "", message }] };
  }
  const v = checkRecordable(item.value, config);
  return v.ok ? { output: v.value } : { issues: v.issues };
}

/** The job ID an item names, if any, for its answer. */
function jobIdOf(value: unknown): string | null {
  const jobId =
    typeof value === "object" && value !== null ? (value as { jobId?: unknown }).jobId : undefined;
  return typeof jobId === "string" ? jobId : null;
}

interface Item {
  value: unknown;
  where: string;
  /** The size of the output as submitted (its line, or its element re-serialised). */
  bytes: number | undefined;
  /** Why a JSON Lines line is not JSON. */
  broken?: string;
}

/** The items of a batch, or `undefined` for one output (or text that is not JSON at all). */
function splitItems(text: string, file: string): Item[] | undefined {
  const lines = text.split("\n");
  if (!JSON_LINES_FILE.test(file)) {
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch (e) {
      // Text too deeply nested for the parser is no batch either: the single path answers it.
      if (!(e instanceof SyntaxError)) return undefined;
      // JSON Lines only when the first line is a JSON value by itself, so that a broken
      // pretty-printed output is reported where it is broken (by the single path).
      const first = lines.find((l) => l.trim() !== "");
      if (first === undefined || !parsesAlone(first)) return undefined;
    }
    if (whole !== undefined) {
      // An array that parsing would change (a key twice, a big integer): the single path names it.
      if (!Array.isArray(whole) || !parseStrictJson(text).ok) return undefined;
      return whole.map((value, i) => ({ value, where: `[${i}]`, bytes: serialisedBytes(value) }));
    }
  }
  const items: Item[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const where = `line ${i + 1}`;
    const bytes = Buffer.byteLength(line);
    try {
      const value = JSON.parse(line);
      const strict = parseStrictJson(line);
      const broken = strict.ok
        ? {}
        : { broken: strict.issues.map((x) => `${x.path} ${x.message}`).join("; ") };
      items.push({ value, where, bytes, ...broken });
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      const why = describeJsonError(line, e).replace(/^at line 1, /, "at ");
      const broken = `is not JSON ${why.startsWith("at ") ? why : `(${why})`}`;
      items.push({ value: undefined, where, bytes, broken });
    }
  });
  return items;
}

/** The bytes of an array element as JSON; `undefined` when it nests too deeply to serialise. */
function serialisedBytes(value: unknown): number | undefined {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? "");
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

function parsesAlone(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch (e) {
    if (e instanceof SyntaxError) return false;
    throw e;
  }
}
