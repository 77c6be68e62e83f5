import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { type JobFileProblems, parseJobFile } from "../src/enqueue/job-file.js";

const job = (jobId: string, n: number, agent = "writer") => ({ jobId, agent, input: { n } });
const jsonl = (...jobs: unknown[]) => `${jobs.map((j) => JSON.stringify(j)).join("\n")}\n`;

/** The INVALID_INPUT error `parseJobFile` throws for `text`, with its details. */
function refusal(text: string, file = "-"): { message: string; details: JobFileProblems } {
  try {
    parseJobFile(text, file);
  } catch (e) {
    if (!isIdemError(e, "INVALID_INPUT")) throw e;
    return { message: e.message, details: e.details as unknown as JobFileProblems };
  }
  throw new Error("parseJobFile accepted the text");
}

describe("parseJobFile", () => {
  it("reads one job as a single job, and an array or JSON Lines as a batch in file order", () => {
    expect(parseJobFile(JSON.stringify(job("one", 1)), "-")).toEqual({
      jobs: [job("one", 1)],
      batch: false,
    });
    expect(parseJobFile(JSON.stringify([job("a", 1), job("b", 2)]), "-")).toEqual({
      jobs: [job("a", 1), job("b", 2)],
      batch: true,
    });
    expect(parseJobFile(jsonl(job("a", 1), job("b", 2)), "-").jobs.map((j) => j.jobId)).toEqual([
      "a",
      "b",
    ]);
  });

  it("treats a .jsonl or .ndjson file of one job as a batch", () => {
    expect(parseJobFile(jsonl(job("one", 1)), "jobs.jsonl").batch).toBe(true);
    expect(parseJobFile(jsonl(job("one", 1)), "jobs.NDJSON").batch).toBe(true);
  });

  it("accepts the same job twice with the same input (a duplicate, not a conflict)", () => {
    expect(parseJobFile(jsonl(job("a", 1), job("a", 1)), "-").jobs).toHaveLength(2);
  });

  it("refuses an invalid single job naming the field, without a line", () => {
    const r = refusal(JSON.stringify({ jobId: "bad id", agent: "writer", input: {} }));
    expect(r.message).toBe("invalid job -: nothing enqueued");
    expect(r.details.file).toBe("-");
    expect(r.details.problems[0]).toMatch(/^jobId: /);
  });

  it("refuses the whole batch when a line is invalid or contradicts another, naming each line and field", () => {
    const r = refusal(
      jsonl(job("ok-1", 1), { jobId: "ok-2", agent: "writer" }, job("ok-1", 9), job("ok-3", 3)),
    );
    expect(r.message).toBe("2 problem(s) in -: nothing enqueued");
    expect(r.details.problems[0]).toMatch(/^line 2 input: /);
    expect(r.details.problems[1]).toBe(
      "line 3: job ok-1 has another agent or input than at line 1",
    );
  });

  it("names the index of a bad job in a JSON array", () => {
    const r = refusal(JSON.stringify([job("a", 1), { jobId: "b", agent: "writer" }]));
    expect(r.details.problems).toHaveLength(1);
    expect(r.details.problems[0]).toMatch(/^\[1\] input: /);
  });

  it("names each broken line of JSON Lines", () => {
    const r = refusal(`${JSON.stringify(job("ok-1", 1))}\n{"jobId": \n`);
    expect(r.message).toBe("- is not valid JSON Lines: nothing enqueued");
    expect(r.details.problems).toHaveLength(1);
    expect(r.details.problems[0]).toMatch(/^line 2: /);
  });

  it("reports a broken pretty-printed job where it is broken, not as a bad first line", () => {
    const r = refusal('{\n  "jobId": "a",\n  "agent": \n}\n', "job.json");
    expect(r.message).toMatch(/^job\.json is not valid JSON /);
    expect(r.details.problems).toEqual([]);
  });

  it("with the known agents, refuses a job for any other agent by line, job and agent, and the whole file with it", () => {
    const text = jsonl(job("a", 1), job("b", 2, "ghost"), job("c", 3));
    expect(parseJobFile(text, "-").jobs.map((j) => j.agent)).toEqual(["writer", "ghost", "writer"]);
    let problems: string[] | undefined;
    try {
      parseJobFile(text, "-", { agents: ["writer"] });
    } catch (e) {
      if (!isIdemError(e, "INVALID_INPUT")) throw e;
      problems = (e.details as unknown as JobFileProblems).problems;
    }
    expect(problems).toHaveLength(1);
    expect(problems?.[0]).toMatch(
      /^line 2 agent: job b is for agent "ghost".*unknown-agent.*writer/,
    );
    expect(() => parseJobFile(JSON.stringify(job("d", 4, "ghost")), "-", { agents: [] })).toThrow(
      /invalid job -: nothing enqueued/,
    );
  });
});
