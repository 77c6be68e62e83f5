import type { AgentOutput } from "@idem/schema";
import { parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { oversizedSubmission, parseSubmission } from "../src/submit/submit-output.js";
import { submitText } from "../src/submit/submit-text.js";

const config = (() => {
  const r = parseConfig(
    { roots: { outbox: { path: "outbox" } }, limits: { maxOutputBytes: 4096 } },
    { dir: "/nonexistent" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
})();

const output = (jobId: string, content: string): AgentOutput =>
  ({
    jobId,
    agent: "writer",
    effects: [{ kind: "file.write", root: "outbox", path: "a.txt", content }],
  }) as AgentOutput;

describe("submitText", () => {
  it("records a valid output, answers the same text again as a duplicate and other content as a conflict", async () => {
    await using t = await tempJournal();
    const text = JSON.stringify(output("s-1", "x"));
    expect(await submitText(t.journal, config, text, "cli")).toEqual({
      status: "recorded",
      jobId: "s-1",
    });
    expect(await submitText(t.journal, config, text, "cli")).toEqual({
      status: "duplicate",
      jobId: "s-1",
    });
    const other = JSON.stringify(output("s-1", "y"));
    expect(await submitText(t.journal, config, other, "cli")).toEqual({
      status: "conflict",
      jobId: "s-1",
    });
    expect((await t.journal.outputs.get("s-1"))?.source).toBe("cli");
  });

  it("answers text that is not JSON as invalid naming where, and writes nothing", async () => {
    await using t = await tempJournal();
    const answer = await submitText(t.journal, config, '{"jobId": ', "cli");
    expect(answer.status).toBe("invalid");
    expect(answer.jobId).toBeNull();
    expect(answer.issues?.[0]?.message).toMatch(/^is not JSON /);
    expect((await t.journal.status()).outputs).toBe(0);
  });

  it("answers an output failing the schema as invalid with its job ID and the field", async () => {
    await using t = await tempJournal();
    const bad = { ...output("s-2", "x"), effects: [{ kind: "file.write", root: "nowhere" }] };
    const answer = await submitText(t.journal, config, JSON.stringify(bad), "cli");
    expect(answer.status).toBe("invalid");
    expect(answer.jobId).toBe("s-2");
    expect(answer.issues?.length).toBeGreaterThan(0);
    expect(await t.journal.outputs.get("s-2")).toBeUndefined();
  });

  it("answers text over limits.maxOutputBytes as invalid before parsing it", async () => {
    await using t = await tempJournal();
    const answer = await submitText(t.journal, config, "x".repeat(5000), "cli");
    expect(answer).toEqual(oversizedSubmission("the output", 5000, 4096));
    expect(answer.issues?.[0]?.message).toBe(
      "the output is 5000 bytes; limits.maxOutputBytes is 4096",
    );
  });
});

describe("parseSubmission", () => {
  it("parses JSON text under the limit and needs no limit", () => {
    expect(parseSubmission('{"a":1}', 10)).toEqual({ ok: true, value: { a: 1 } });
    expect(parseSubmission("[1]")).toEqual({ ok: true, value: [1] });
  });
});
