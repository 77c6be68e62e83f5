import {
  type AgentOutput,
  type Config,
  canonicalJson,
  describeJsonError,
  IdemError,
} from "@idem/schema";
import { checkRecordable } from "../validate/index.js";

/**
 * What an `idem submit` file holds: one output (handled as a single submission, so that its
 * answer stays the submit shape of DESIGN.md) or a batch, every output of it already checked.
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
 * named by the caller and every problem, each naming its line (`line 3`) or index (`[2]`) and field.
 */
export interface OutputFileProblems {
  file: string;
  problems: string[];
}

/** A `.jsonl` or `.ndjson` file is JSON Lines, a batch even of one output (scripts get an array). */
const JSON_LINES_FILE = /\.(jsonl|ndjson)$/i;

/**
 * Reads the outputs of an `idem submit` file: one AgentOutput, a JSON array of them, or JSON
 * Lines (one per line; a `.jsonl` or `.ndjson` file always is). A single output (or text that is
 * no JSON at all) comes back as `{ batch: false }`, for the single submission path. A batch is
 * checked as a whole before anything is recorded: each output against `limits.maxOutputBytes` and
 * by `checkRecordable` (the one gate of every surface), and one job ID with two different outputs
 * in the same file is refused. Pure: `file` only names the text (and tells JSON Lines by its
 * extension); nothing is read or written.
 * @throws INVALID_INPUT with {@link OutputFileProblems} as `details` when any output of a batch
 * is refused (its message ends in "nothing recorded"), or when a JSON Lines line is not JSON.
 */
export function parseOutputFile(text: string, file: string, config: Config): OutputFile {
  const items = splitItems(text, file);
  if (items === undefined) return { batch: false };
  const problems: string[] = [];
  const outputs: AgentOutput[] = [];
  const where: string[] = [];
  const firstSeen = new Map<string, { where: string; content: string }>();
  const max = config.limits.maxOutputBytes;
  for (const item of items) {
    if (item.bytes > max) {
      problems.push(`${item.where}: is ${item.bytes} bytes; limits.maxOutputBytes is ${max}`);
      continue;
    }
    const v = checkRecordable(item.value, config);
    if (!v.ok) {
      for (const i of v.issues)
        problems.push(`${item.where} ${i.path || "(output)"}: ${i.message}`);
      continue;
    }
    const content = canonicalJson(v.value);
    const seen = firstSeen.get(v.value.jobId);
    if (seen && seen.content !== content) {
      problems.push(
        `${item.where}: job ${v.value.jobId} has another output than at ${seen.where} (first write wins)`,
      );
      continue;
    }
    if (!seen) firstSeen.set(v.value.jobId, { where: item.where, content });
    outputs.push(v.value);
    where.push(item.where);
  }
  if (problems.length > 0) {
    throw invalid(`${problems.length} problem(s) in ${file}: nothing recorded`, file, problems);
  }
  return { batch: true, outputs, where };
}

function invalid(message: string, file: string, problems: string[]): IdemError {
  const details: OutputFileProblems = { file, problems };
  return new IdemError("INVALID_INPUT", message, { details: { ...details } });
}

interface Item {
  value: unknown;
  where: string;
  /** The size of the output as submitted (its line, or its element re-serialised). */
  bytes: number;
}

/** The items of a batch, or `undefined` for one output (or text that is not JSON at all). */
function splitItems(text: string, file: string): Item[] | undefined {
  const lines = text.split("\n");
  if (!JSON_LINES_FILE.test(file)) {
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      // JSON Lines only when the first line is a JSON value by itself, so that a broken
      // pretty-printed output is reported where it is broken (by the single path).
      const first = lines.find((l) => l.trim() !== "");
      if (first === undefined || !parsesAlone(first)) return undefined;
    }
    if (whole !== undefined) {
      if (!Array.isArray(whole)) return undefined;
      return whole.map((value, i) => ({
        value,
        where: `[${i}]`,
        bytes: Buffer.byteLength(JSON.stringify(value) ?? ""),
      }));
    }
  }
  const items: Item[] = [];
  const broken: string[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      items.push({
        value: JSON.parse(line),
        where: `line ${i + 1}`,
        bytes: Buffer.byteLength(line),
      });
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      broken.push(`line ${i + 1}: ${describeJsonError(line, e).replace(/^at line 1, /, "at ")}`);
    }
  });
  if (broken.length > 0) {
    throw invalid(`${file} is not valid JSON Lines: nothing recorded`, file, broken);
  }
  return items;
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
