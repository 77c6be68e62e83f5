// Hostile and malformed submissions shared by the fuzz suites.
import fc from "fast-check";

let deep: unknown = "bottom";
for (let i = 0; i < 500; i++) deep = { d: deep };

/** Values an attacker or a broken agent might put in any field. */
export const hostile = fc.oneof(
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

export const validOutput = (jobId: string) => ({
  jobId,
  agent: "writer",
  summary: "ok",
  effects: [
    { kind: "git.commit", repo: "site", message: "m", files: [{ path: "a.txt", content: "a" }] },
    { kind: "file.write", root: "outbox", path: "r.txt", content: "r" },
    { kind: "nats.publish", target: "events", subject: "done", data: { a: 1 } },
    { kind: "http.request", target: "hooks", method: "POST", path: "/hook", body: "x" },
    {
      kind: "git.patch",
      repo: "site",
      message: "p",
      patch: "diff --git a/p.txt b/p.txt\n--- a/p.txt\n+++ b/p.txt\n@@ -1 +1 @@\n-a\n+b\n",
    },
  ],
});

/** A path into the valid output where the hostile value goes. */
export const fieldPaths = [
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
  ["effects", 4, "patch"],
] as const;

export function setAt(obj: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(obj) as Record<string | number, unknown>;
  let cur = copy;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  cur[path[path.length - 1] as string | number] = value;
  return copy;
}

export const submission = fc.oneof(
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

/** The text of one generated submission (undefined when it has no JSON form). */
export function submissionText(s: { p: string; v: unknown }, jobId: string): string | undefined {
  if (s.p === "(text)") return s.v as string;
  const value =
    s.p === "(whole)"
      ? s.v
      : setAt(
          validOutput(jobId),
          s.p.split(".").map((k) => (/^\d+$/.test(k) ? Number(k) : k)),
          s.v,
        );
  return JSON.stringify(value);
}
