import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { submitText } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { parseConfig, validateJob } from "@idem/schema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hostile, submission, submissionText } from "./hostile.js";

const config = (() => {
  const r = parseConfig(
    {
      repos: { site: { path: "site" } },
      roots: { outbox: { path: "outbox" } },
      publish: { events: { subjectPrefix: "events", stream: "EVENTS" } },
      http: { targets: { hooks: { baseUrl: "http://127.0.0.1:9" } } },
      limits: { maxOutputBytes: 262_144, maxFileBytes: 65_536 },
    },
    { dir: "/nonexistent" },
  );
  if (!r.ok) throw new Error("config");
  return r.config;
})();

describe("fuzzing the validation and record paths", () => {
  it("answers 10,000 malformed or hostile outputs with a clear error naming the field and writes nothing for them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-fuzz-"));
    const journal = await openSqliteJournal(join(dir, "journal.db"), { synchronous: "OFF" });
    const counts = () =>
      journal.database
        .prepare(
          "SELECT (SELECT COUNT(*) FROM outputs) o, (SELECT COUNT(*) FROM runs) r, (SELECT COUNT(*) FROM rejections) j, (SELECT COUNT(*) FROM effects) e",
        )
        .get();
    try {
      let n = 0;
      let recorded = 0;
      const samples = fc.sample(submission, { numRuns: 10_000, seed: 42 });
      for (const { p, v } of samples) {
        n += 1;
        const jobId = `fuzz-${n}`;
        const text = submissionText({ p, v }, jobId);
        if (text === undefined) continue;
        const before = counts();
        const answer = await submitText(journal, config, text, "cli");
        if (answer.status === "invalid") {
          expect(answer.issues?.length, `${p} = ${String(text).slice(0, 80)}`).toBeGreaterThan(0);
          for (const issue of answer.issues ?? []) {
            expect(typeof issue.path).toBe("string");
            expect(issue.message.length).toBeGreaterThan(0);
            // The field is named: by its path, or (for a root-level problem) in the message.
            if (p !== "(whole)" && p !== "(text)" && issue.path === "")
              expect(issue.message).toMatch(/\w/);
          }
          expect(counts()).toEqual(before);
        } else {
          expect(["recorded", "duplicate"]).toContain(answer.status);
          if (answer.status === "recorded") recorded += 1;
        }
      }
      expect(n).toBe(10_000);
      expect((counts() as { o: number }).o).toBe(recorded);
      expect(await journal.maintenance.integrity()).toEqual([]);
    } finally {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses malformed jobs with the field named", () => {
    const samples = fc.sample(
      fc.tuple(fc.constantFrom("jobId", "agent", "input", "createdAt", "extra"), hostile),
      { numRuns: 2000, seed: 7 },
    );
    for (const [field, value] of samples) {
      const r = validateJob({ jobId: "j-1", agent: "writer", input: {}, [field]: value });
      if (!r.ok) {
        expect(r.issues.length).toBeGreaterThan(0);
        expect(r.issues.every((i) => typeof i.path === "string" && i.message.length > 0)).toBe(
          true,
        );
      }
    }
  });
});
