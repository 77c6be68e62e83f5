import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openJournal } from "@idem/journal";
import { parseConfig, validateJob } from "@idem/schema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { submitText } from "../../apps/cli/src/commands/submit.js";

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

let deep: unknown = "bottom";
for (let i = 0; i < 500; i++) deep = { d: deep };

/** Values an attacker or a broken agent might put in any field. */
const hostile = fc.oneof(
  fc.constantFrom(
    "../../etc/passwd",
    "/etc/passwd",
    ".git/hooks/pre-commit",
    "a/../../b",
    "--upload-pack=touch /tmp/pwned",
    "-rf",
    "x\nIdem-Effect: other/0",
    "Idem-Effect: forged/1",
    "refs/heads/../../x",
    "main; rm -rf /",
    "$(reboot)",
    "events.>",
    "$JS.API.STREAM.DELETE.X",
    "idem.jobs.writer",
    "http://evil.example/",
    "//evil.example/x",
    "/%2e%2e/admin",
    "x\uD800y",
    "\uDC00",
    "\u0000",
    "C:\\Windows",
    "teleport",
    "",
    "x".repeat(300_000),
  ),
  fc.constantFrom<unknown>(null, 0, -1, 1e308, true, [], {}, deep, { __proto__: null, a: 1 }),
  fc.string({ maxLength: 40 }),
  fc.jsonValue({ maxDepth: 4 }),
);

const validOutput = (jobId: string) => ({
  jobId,
  agent: "writer",
  summary: "ok",
  effects: [
    { kind: "git.commit", repo: "site", message: "m", files: [{ path: "a.txt", content: "a" }] },
    { kind: "file.write", root: "outbox", path: "r.txt", content: "r" },
    { kind: "nats.publish", target: "events", subject: "done", data: { a: 1 } },
    { kind: "http.request", target: "hooks", method: "POST", path: "/hook", body: "x" },
  ],
});

/** A path into the valid output where the hostile value goes. */
const fieldPaths = [
  ["jobId"],
  ["agent"],
  ["summary"],
  ["meta"],
  ["extra"],
  ["effects"],
  ["effects", 0],
  ["effects", 0, "kind"],
  ["effects", 0, "repo"],
  ["effects", 0, "branch"],
  ["effects", 0, "message"],
  ["effects", 0, "files", 0, "path"],
  ["effects", 0, "files", 0, "content"],
  ["effects", 1, "root"],
  ["effects", 1, "path"],
  ["effects", 1, "encoding"],
  ["effects", 2, "subject"],
  ["effects", 2, "headers"],
  ["effects", 3, "path"],
  ["effects", 3, "method"],
  ["effects", 3, "headers"],
] as const;

function setAt(obj: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(obj) as Record<string | number, unknown>;
  let cur = copy;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  cur[path[path.length - 1] as string | number] = value;
  return copy;
}

const submission = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom(...fieldPaths), hostile)
      .map(([p, v]) => ({ p: p.join("."), v })),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 6 }).map((v) => ({ p: "(whole)", v })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { p: "(text)", v: "{not json" },
      { p: "(text)", v: '{"jobId": "a",}' },
      { p: "(text)", v: `${'{"d":'.repeat(100_000)}1${"}".repeat(100_000)}` },
      { p: "(text)", v: `${"[".repeat(100_000)}${"]".repeat(100_000)}` },
    ),
  },
);

describe("fuzzing the validation and record paths", () => {
  it("answers 10,000 malformed or hostile outputs with a clear error naming the field and writes nothing for them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-fuzz-"));
    const journal = await openJournal(join(dir, "journal.db"), { synchronous: "OFF" });
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
        const text =
          p === "(text)"
            ? (v as string)
            : JSON.stringify(
                p === "(whole)"
                  ? v
                  : setAt(
                      validOutput(jobId),
                      p.split(".").map((k) => (/^\d+$/.test(k) ? Number(k) : k)),
                      v,
                    ),
              );
        if (text === undefined) continue;
        const before = counts();
        const answer = await submitText(text, "fuzz", config, journal);
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
      expect(await journal.integrity()).toEqual([]);
    } finally {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

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
