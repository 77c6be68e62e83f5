import { canonicalJson, describeJsonError, IdemError, type Job, validateJob } from "@idem/schema";

/** The jobs of an `idem enqueue` file, validated as a whole, in file order. */
export interface JobFile {
  jobs: Job[];
  /** A JSON array or JSON Lines (even of one job), as opposed to one Job object. */
  batch: boolean;
}

/**
 * What {@link parseJobFile} puts in the `details` of its `INVALID_INPUT` error: the file as named
 * by the caller and every problem, each naming its line (`line 3`), index (`[2]`) or field.
 * `problems` is empty when the whole text is not JSON (the message says where).
 */
export interface JobFileProblems {
  file: string;
  problems: string[];
}

/** Options of {@link parseJobFile}. */
export interface JobFileOptions {
  /**
   * The agents the enqueuing side knows (the config's `agents`): a job for any other agent is a
   * problem of the file (`unknown-agent`), so it is refused before anything is enqueued instead of
   * sitting queued forever. Without it any well-formed agent name is accepted (JetStream, where
   * executors elsewhere may run other agents).
   */
  agents?: readonly string[];
}

/**
 * Reads the jobs of an enqueue file: one Job, a JSON array of Jobs, or JSON Lines (one Job per
 * line; a `.jsonl` or `.ndjson` file always is, so that a batch of one is still a batch). Every job
 * is validated before anything is enqueued, and a file that gives one job ID two different inputs,
 * or (with `options.agents`) a job for an agent not known, is refused: bad input names its line
 * (or index), job and field, and enqueues nothing. Pure: `file` only names the text (and tells JSON
 * Lines by its extension); nothing is read or written.
 * @throws INVALID_INPUT with {@link JobFileProblems} as `details`, its message ending in
 * "nothing enqueued" when problems are listed.
 */
export function parseJobFile(text: string, file: string, options: JobFileOptions = {}): JobFile {
  const known = options.agents === undefined ? undefined : new Set(options.agents);
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
    if (known && !known.has(v.value.agent)) {
      const field = items.batch ? `${item.where} agent` : "agent";
      problems.push(`${field}: ${unknownAgent(v.value.jobId, v.value.agent, known)}`);
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
    throw invalid(`${what}: nothing enqueued`, file, problems);
  }
  return { jobs, batch: items.batch };
}

/** The problem of a job for an agent the enqueuing side does not know (failure class unknown-agent). */
function unknownAgent(jobId: string, agent: string, known: ReadonlySet<string>): string {
  const configured = known.size > 0 ? [...known].join(", ") : "none";
  return `job ${jobId} is for agent "${agent}", which no configured agent matches (unknown-agent; agents configured: ${configured}); add agents.${agent} to the config or fix the job`;
}

function invalid(message: string, file: string, problems: string[]): IdemError {
  const details: JobFileProblems = { file, problems };
  return new IdemError("INVALID_INPUT", message, { details: { ...details } });
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
        throw invalid(`${file} is not valid JSON ${describeJsonError(text, e)}`, file, []);
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
    throw invalid(`${file} is not valid JSON Lines: nothing enqueued`, file, broken);
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
