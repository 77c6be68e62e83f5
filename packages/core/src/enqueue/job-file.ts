import { canonicalJson, describeJsonError, type Job, validateJob } from "@idem/schema";
import { CliError, capped, EXIT } from "../context.js";

/** The jobs of an `idem enqueue` file. */
export interface JobFile {
  jobs: Job[];
  /** A JSON array or JSON Lines (even of one job), as opposed to one Job object. */
  batch: boolean;
}

/**
 * Reads the jobs of an enqueue file: one Job, a JSON array of Jobs, or JSON Lines (one Job per
 * line; a `.jsonl` or `.ndjson` file always is, so that a batch of one is still a batch). Every job
 * is validated before anything is enqueued, and a file that gives one job ID two different inputs
 * is refused: bad input names its line (or index) and field, and enqueues nothing.
 * @throws CliError (exit 1) listing every problem.
 */
export function parseJobFile(text: string, file: string): JobFile {
  const items = splitItems(text, file);
  const problems: string[] = [];
  const jobs: Job[] = [];
  const firstSeen = new Map<string, { where: string; content: string }>();
  for (const item of items.values) {
    const v = validateJob(item.value);
    if (!v.ok) {
      for (const i of v.issues) {
        // One job keeps the single-job form ("input: ..."); a batch says where ("line 3 input: ...").
        const field = items.batch
          ? `${item.where}${i.path ? ` ${i.path}` : ""}`
          : i.path || "(job)";
        problems.push(`${field}: ${i.message}`);
      }
      continue;
    }
    const content = canonicalJson({ agent: v.value.agent, input: v.value.input });
    const seen = firstSeen.get(v.value.jobId);
    if (seen && seen.content !== content) {
      problems.push(
        `${item.where}: job ${v.value.jobId} has another agent or input than at ${seen.where}`,
      );
    } else if (!seen) {
      firstSeen.set(v.value.jobId, { where: item.where, content });
    }
    jobs.push(v.value);
  }
  if (problems.length > 0) {
    const what = items.batch ? `${problems.length} problem(s) in ${file}` : `invalid job ${file}`;
    throw new CliError(
      `${what}: nothing enqueued\n${capped(problems).join("\n")}`,
      EXIT.FAILED,
      problems,
    );
  }
  return { jobs, batch: items.batch };
}

interface Items {
  values: { value: unknown; where: string }[];
  batch: boolean;
}

/** A `.jsonl` or `.ndjson` file is JSON Lines, a batch even of one job (scripts get an array). */
const JSON_LINES_FILE = /\.(jsonl|ndjson)$/i;

function splitItems(text: string, file: string): Items {
  const lines = text.split("\n");
  if (!JSON_LINES_FILE.test(file)) {
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      // JSON Lines: only when the first line is a JSON value by itself, so that a broken
      // pretty-printed job is reported where it is broken, not as a bad first line.
      const first = lines.find((l) => l.trim() !== "");
      if (first === undefined || !parsesAlone(first)) {
        throw new CliError(`${file} is not valid JSON ${describeJsonError(text, e)}`);
      }
    }
    if (whole !== undefined) {
      if (!Array.isArray(whole))
        return { values: [{ value: whole, where: "(job)" }], batch: false };
      return { values: whole.map((value, i) => ({ value, where: `[${i}]` })), batch: true };
    }
  }
  const values: Items["values"] = [];
  const broken: string[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      values.push({ value: JSON.parse(line), where: `line ${i + 1}` });
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      broken.push(`line ${i + 1}: ${describeJsonError(line, e).replace(/^at line 1, /, "at ")}`);
    }
  });
  if (broken.length > 0) {
    throw new CliError(
      `${file} is not valid JSON Lines: nothing enqueued\n${capped(broken).join("\n")}`,
      EXIT.FAILED,
    );
  }
  return { values, batch: true };
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
