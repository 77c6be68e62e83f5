import type { AgentOutput } from "@idem/schema";
import { parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { submitText } from "../src/submit/submit-text.js";
import { checkRecordable } from "../src/validate/check-recordable.js";

const config = (() => {
  const r = parseConfig(
    {
      repos: { site: { path: "site" } },
      roots: { outbox: { path: "outbox" } },
      http: { targets: { hooks: { baseUrl: "http://127.0.0.1:9/api" } } },
    },
    { dir: "/nonexistent" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
})();

const good = [
  "diff --git a/a.txt b/a.txt",
  "--- a/a.txt",
  "+++ b/a.txt",
  "@@ -1 +1 @@",
  "-old",
  "+new",
  "",
].join("\n");

const patchOf = (patch: string) =>
  ({
    jobId: "p-1",
    agent: "writer",
    effects: [{ kind: "git.patch", repo: "site", message: "m", patch }],
  }) as AgentOutput;

const BAD_PATCHES: [string, string][] = [
  ["a path with ..", good.replaceAll("a.txt", "../../etc/passwd")],
  ["a path under .git", good.replaceAll("a.txt", ".git/config")],
  ["an absolute path", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-root\n+evil\n"],
  [
    "a symlink created",
    "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n",
  ],
  [
    "a binary hunk",
    "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nKcmZ>AL;wH)\n\n",
  ],
  ["text that is not a patch", "please apply my changes\n"],
  [
    "a rename whose target escapes",
    "diff --git a/a.txt b/x\nsimilarity index 100%\nrename from a.txt\nrename to ../x\n",
  ],
  [
    "a copy whose source escapes",
    "diff --git a/x b/c.txt\nsimilarity index 100%\ncopy from ../../secret\ncopy to c.txt\n",
  ],
  ["a hunk shorter than its header", good.replace("@@ -1 +1 @@", "@@ -1,3 +1,3 @@")],
  [
    "a hunk with a line that is no hunk line",
    good.replace("@@ -1 +1 @@", "@@ -1,2 +1,2 @@").replace("+new", "+new\n*junk"),
  ],
];

describe("checkRecordable", () => {
  it("passes a plain patch and an output without effects", () => {
    expect(checkRecordable(patchOf(good), config).ok).toBe(true);
    expect(checkRecordable({ jobId: "e", agent: "w", effects: [] }, config).ok).toBe(true);
  });

  for (const [what, patch] of BAD_PATCHES) {
    it(`refuses a git.patch with ${what}, naming effects.0.patch, and submit records nothing`, async () => {
      const v = checkRecordable(patchOf(patch), config);
      expect(v.ok).toBe(false);
      if (v.ok) return;
      expect(v.issues.map((i) => i.path)).toContain("effects.0.patch");
      await using t = await tempJournal();
      const answer = await submitText(t.journal, config, JSON.stringify(patchOf(patch)), "cli");
      expect(answer.status).toBe("invalid");
      expect(answer.issues?.[0]?.path).toBe("effects.0.patch");
      expect(await t.journal.outputs.get("p-1")).toBeUndefined();
      expect((await t.journal.status()).outputs).toBe(0);
    });
  }

  it("refuses a git.commit whose message forges a trailer, naming effects.0.message", () => {
    const v = checkRecordable(
      {
        jobId: "c-1",
        agent: "w",
        effects: [
          {
            kind: "git.commit",
            repo: "site",
            message: "x\n\nIdem-Effect: other/0",
            files: [{ path: "a.txt", content: "a" }],
          },
        ],
      },
      config,
    );
    expect(v.ok ? [] : v.issues.map((i) => i.path)).toEqual(["effects.0.message"]);
  });

  it("refuses a git.commit that writes a file and a file inside it, naming the deeper path", () => {
    const v = checkRecordable(
      {
        jobId: "c-2",
        agent: "w",
        effects: [
          {
            kind: "git.commit",
            repo: "site",
            message: "m",
            files: [
              { path: "a", content: "a" },
              { path: "a/b", content: "b" },
            ],
          },
        ],
      },
      config,
    );
    expect(v.ok ? [] : v.issues.map((i) => i.path)).toEqual(["effects.0.files.1.path"]);
  });

  it("refuses an http.request with a reserved header, naming the header's field", () => {
    const v = checkRecordable(
      {
        jobId: "h-1",
        agent: "w",
        effects: [
          {
            kind: "http.request",
            target: "hooks",
            method: "POST",
            path: "/x",
            headers: { "Idempotency-Key": "mine" },
          },
        ],
      },
      config,
    );
    expect(v.ok ? [] : v.issues.map((i) => i.path)).toEqual(["effects.0.headers.Idempotency-Key"]);
  });
});
