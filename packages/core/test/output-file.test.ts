import { type AgentOutput, isIdemError, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { type OutputFileProblems, parseOutputFile } from "../src/submit/output-file.js";
import { submitOutputs } from "../src/submit/submit-batch.js";

const config = (() => {
  const r = parseConfig(
    {
      repos: { site: { path: "repos/site" } },
      roots: { outbox: { path: "outbox" } },
      limits: { maxOutputBytes: 1024 },
    },
    { dir: "/nonexistent" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
})();

const output = (jobId: string, content = "x"): AgentOutput =>
  ({
    jobId,
    agent: "writer",
    effects: [{ kind: "file.write", root: "outbox", path: "a.txt", content }],
  }) as AgentOutput;

const lines = (...values: unknown[]) => values.map((v) => JSON.stringify(v)).join("\n");

/** The problems of a refused file. */
function problemsOf(text: string, file: string): string[] {
  try {
    parseOutputFile(text, file, config);
  } catch (e) {
    if (!isIdemError(e, "INVALID_INPUT")) throw e;
    expect(e.message).toMatch(/nothing recorded$/);
    return (e.details as unknown as OutputFileProblems).problems;
  }
  throw new Error("the file was not refused");
}

describe("parseOutputFile", () => {
  it("leaves one output, and text that is no JSON at all, to the single submission path", () => {
    expect(parseOutputFile(JSON.stringify(output("o-1")), "o.json", config)).toEqual({
      batch: false,
    });
    expect(parseOutputFile(JSON.stringify(output("o-1"), null, 2), "-", config)).toEqual({
      batch: false,
    });
    expect(parseOutputFile('{"jobId": \n "x"', "o.json", config)).toEqual({ batch: false });
  });

  it("reads a JSON array and JSON Lines in file order, saying where each output is", () => {
    const array = parseOutputFile(JSON.stringify([output("a"), output("b")]), "o.json", config);
    expect(array).toEqual({
      batch: true,
      outputs: [output("a"), output("b")],
      where: ["[0]", "[1]"],
    });
    const jsonl = parseOutputFile(`${lines(output("a"), output("b"))}\n\n`, "-", config);
    expect(jsonl).toEqual({
      batch: true,
      outputs: [output("a"), output("b")],
      where: ["line 1", "line 2"],
    });
  });

  it("takes a .jsonl or .ndjson file as a batch even of one output", () => {
    for (const file of ["o.jsonl", "o.NDJSON"]) {
      expect(parseOutputFile(lines(output("a")), file, config)).toMatchObject({
        batch: true,
        where: ["line 1"],
      });
    }
  });

  it("refuses the whole batch naming each bad line and field: schema, unknown alias, size, broken patch", () => {
    const traversal = {
      jobId: "p",
      agent: "writer",
      effects: [
        {
          kind: "git.patch",
          repo: "site",
          message: "m",
          patch: "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-root\n+evil\n",
        },
      ],
    };
    const problems = problemsOf(
      lines(
        output("ok-1"),
        {
          jobId: "bad-1",
          agent: "writer",
          effects: [{ kind: "file.write", root: "nowhere", path: "a", content: "" }],
        },
        output("big", "y".repeat(2000)),
        traversal,
        { agent: "writer", effects: [] },
      ),
      "o.jsonl",
    );
    expect(problems.some((p) => p.startsWith("line 2 effects.0.root:"))).toBe(true);
    expect(problems).toContainEqual(
      expect.stringMatching(/^line 3: is \d+ bytes; limits\.maxOutputBytes is 1024$/),
    );
    expect(problems.some((p) => p.startsWith("line 4 effects.0.patch"))).toBe(true);
    expect(problems.some((p) => p.startsWith("line 5 jobId:"))).toBe(true);
    expect(problems.some((p) => p.startsWith("line 1"))).toBe(false);
  });

  it("refuses one job ID with two different outputs in one file, and takes the same output twice", () => {
    expect(problemsOf(JSON.stringify([output("a"), output("a", "other")]), "o.json")).toEqual([
      "[1]: job a has another output than at [0] (first write wins)",
    ]);
    const same = parseOutputFile(JSON.stringify([output("a"), output("a")]), "o.json", config);
    expect(same).toMatchObject({ batch: true, where: ["[0]", "[1]"] });
  });

  it("names every line of JSON Lines that is not JSON", () => {
    const problems = problemsOf(`${lines(output("a"))}\n{"jobId": \nnot json`, "o.jsonl");
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^line 2: /);
    expect(problems[1]).toMatch(/^line 3: /);
  });
});

describe("submitOutputs", () => {
  it("records a batch in order and answers each: recorded, then duplicate, and conflict for other content", async () => {
    await using t = await tempJournal();
    const batch = Array.from({ length: 40 }, (_, i) => output(`b-${i}`));
    const settled: number[] = [];
    const first = await submitOutputs(t.journal, config, batch, "cli", {
      onSettled: (i) => settled.push(i),
    });
    expect(first).toEqual(batch.map((o) => ({ status: "recorded", jobId: o.jobId })));
    expect(settled.sort((a, b) => a - b)).toEqual(batch.map((_, i) => i));
    expect((await t.journal.status()).outputs).toBe(40);

    const again = await submitOutputs(
      t.journal,
      config,
      [output("b-0"), output("b-1", "other")],
      "cli",
    );
    expect(again).toEqual([
      { status: "duplicate", jobId: "b-0" },
      { status: "conflict", jobId: "b-1" },
    ]);
    expect((await t.journal.outputs.get("b-1"))?.source).toBe("cli");
  });
});

describe("parseOutputFile on a refused batch", () => {
  it("gives one invalid answer per output in file order: its own issues, or why it was not recorded either", () => {
    let details: OutputFileProblems | undefined;
    try {
      parseOutputFile(
        `${lines(output("ok-1"), { jobId: "bad", agent: "writer", effects: 3 })}\n{"x":`,
        "o.jsonl",
        config,
      );
    } catch (e) {
      if (!isIdemError(e, "INVALID_INPUT")) throw e;
      details = e.details as unknown as OutputFileProblems;
    }
    expect(details?.answers.map((a) => [a.status, a.jobId])).toEqual([
      ["invalid", "ok-1"],
      ["invalid", "bad"],
      ["invalid", null],
    ]);
    expect(details?.answers[0]?.issues?.[0]?.message).toMatch(/^not recorded: 2 other output/);
    expect(details?.answers[1]?.issues?.[0]?.path).toBe("effects");
    expect(details?.answers[2]?.issues?.[0]?.message).toMatch(/^is not JSON /);
  });
});
