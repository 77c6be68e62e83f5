import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { submitOutput } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { parseConfig } from "@idem/schema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const config = (() => {
  const r = parseConfig(
    {
      repos: { site: { path: "site" } },
      roots: { outbox: { path: "outbox" } },
      publish: { events: { subjectPrefix: "events", stream: "EVENTS" } },
      http: { targets: { hooks: { baseUrl: "http://127.0.0.1:9/api" } } },
      limits: { maxOutputBytes: 262_144, maxFileBytes: 4_096, maxEffects: 5 },
    },
    { dir: "/nonexistent" },
  );
  if (!r.ok) throw new Error("config");
  return r.config;
})();

/** A path that leaves its repo or root, or names git's own files. */
const escaping = fc.oneof(
  fc.constantFrom("..", "../x", "a/../../x", "/etc/passwd", ".git/config", "a/.GIT/hooks/x"),
  fc
    .tuple(fc.stringMatching(/^[a-z]{1,6}$/), fc.constantFrom("..", ".git", ""))
    .map(([a, bad]) => `${a}/${bad}/${a}`),
  fc.stringMatching(/^[a-z]{1,6}$/).map((a) => `/${a}`),
  fc.stringMatching(/^[a-z]{1,6}$/).map((a) => `C:\\${a}`),
);

const hunk = (path: string) => `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-one\n+two\n`;

/** Patches the interpreter could never apply for a reason of their own. */
const badPatch = fc.oneof(
  escaping.map((p) => `diff --git a/${p} b/${p}\n${hunk(p)}`),
  escaping.map((p) => hunk(p)),
  escaping.map(
    (p) => `diff --git a/a.txt b/x\nsimilarity index 100%\nrename from a.txt\nrename to ${p}\n`,
  ),
  escaping.map(
    (p) => `diff --git a/x b/c.txt\nsimilarity index 100%\ncopy from ${p}\ncopy to c.txt\n`,
  ),
  fc
    .constantFrom("120000", "160000")
    .map(
      (mode) =>
        `diff --git a/l b/l\nnew file mode ${mode}\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+target\n`,
    ),
  fc.constant(
    "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nKcmZ>AL;wH)\n\n",
  ),
  fc.constant("diff --git a/b.bin b/b.bin\nBinary files a/b.bin and b/b.bin differ\n"),
  fc.string({ maxLength: 200 }).filter((s) => !s.includes("@@") && !s.includes("---")),
  fc
    .integer({ min: 2, max: 9 })
    .map(
      (n) =>
        `diff --git a/a.txt b/a.txt\n${hunk("a.txt").replace("@@ -1 +1 @@", `@@ -1,${n} +1,${n} @@`)}`,
    ),
);

/** One effect that must be refused, and the field path its issue must start with. */
const badEffect: fc.Arbitrary<{ effect: Record<string, unknown>; field: string }> = fc.oneof(
  badPatch.map((patch) => ({
    effect: { kind: "git.patch", repo: "site", message: "m", patch },
    field: "patch",
  })),
  escaping.map((path) => ({
    effect: { kind: "git.commit", repo: "site", message: "m", files: [{ path, content: "x" }] },
    field: "files",
  })),
  escaping.map((path) => ({
    effect: { kind: "file.write", root: "outbox", path, content: "x" },
    field: "path",
  })),
  fc.stringMatching(/^[a-z]{1,8}$/).chain((alias) =>
    fc.constantFrom(
      {
        effect: {
          kind: "git.commit",
          repo: `no${alias}`,
          message: "m",
          files: [{ path: "a", content: "x" }],
        },
        field: "repo",
      },
      {
        effect: { kind: "git.patch", repo: `no${alias}`, message: "m", patch: hunk("a") },
        field: "repo",
      },
      {
        effect: { kind: "file.write", root: `no${alias}`, path: "a", content: "x" },
        field: "root",
      },
      {
        effect: { kind: "nats.publish", target: `no${alias}`, subject: "a", data: 1 },
        field: "target",
      },
      {
        effect: { kind: "http.request", target: `no${alias}`, method: "POST", path: "/a" },
        field: "target",
      },
    ),
  ),
  fc.integer({ min: 4_097, max: 8_000 }).map((n) => ({
    effect: { kind: "file.write", root: "outbox", path: "big.txt", content: "x".repeat(n) },
    field: "content",
  })),
  fc
    .string({ maxLength: 20 })
    .filter(
      (k) => !["git.commit", "git.patch", "file.write", "nats.publish", "http.request"].includes(k),
    )
    .map((kind) => ({
      effect: { kind, root: "outbox", path: "a", content: "x" },
      field: "kind",
    })),
  fc
    .constantFrom("/../x", "//evil.example/x", "http://evil.example/", "/a/%2e%2e/x")
    .map((path) => ({
      effect: { kind: "http.request", target: "hooks", method: "GET", path },
      field: "path",
    })),
  fc.constantFrom("$SYS.x", "a.*", "a.>", "a..b", "a b").map((subject) => ({
    effect: { kind: "nats.publish", target: "events", subject, data: 1 },
    field: "subject",
  })),
);

describe("fuzzing outputs that must be refused before the record", () => {
  it("answers every generated bad output submitted through core's submit as invalid with its field path, and writes no row anywhere", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-fuzz-bad-"));
    const journal = await openSqliteJournal(join(dir, "journal.db"), { synchronous: "OFF" });
    const tables = ["outputs", "runs", "effects", "rejections", "events", "jobs", "dead_letters"];
    const rows = () =>
      tables.map(
        (t) =>
          (journal.database.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n,
      );
    try {
      const samples = fc.sample(fc.tuple(badEffect, fc.integer({ min: 0, max: 3 })), {
        numRuns: 3_000,
        seed: 21,
      });
      let n = 0;
      for (const [{ effect, field }, before] of samples) {
        n += 1;
        // The bad effect sits among good ones, so its index is in the path.
        const good = { kind: "file.write", root: "outbox", path: `ok-${n}.txt`, content: "ok" };
        const effects = [...Array.from({ length: before }, () => good), effect];
        const answer = await submitOutput({
          journal,
          config,
          raw: { jobId: `bad-${n}`, agent: "w", effects },
          source: "cli",
        });
        const what = JSON.stringify(effect).slice(0, 160);
        expect(answer.status, what).toBe("invalid");
        expect(answer.jobId).toBe(`bad-${n}`);
        const paths = (answer.issues ?? []).map((i) => i.path);
        expect(paths.length, what).toBeGreaterThan(0);
        expect(
          paths.some((p) => p.startsWith(`effects.${before}.${field}`)),
          `${what}: ${paths.join(", ")}`,
        ).toBe(true);
      }
      expect(rows()).toEqual(tables.map(() => 0));
    } finally {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
