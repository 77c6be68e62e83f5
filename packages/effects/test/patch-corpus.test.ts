import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configSection } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEffects, type Effects } from "../src/index.js";
import { clock, git, gitRaw, patchSpec, type Sandbox, sandbox } from "./helpers.js";

const lines = (n: number, tag = "line") =>
  Array.from({ length: n }, (_, i) => `${tag} ${i + 1}\n`).join("");

/** The base every patch of the corpus applies to. */
function seedBase(repo: string): void {
  const w = (p: string, c: string | Buffer) => {
    mkdirSync(join(repo, p, ".."), { recursive: true });
    writeFileSync(join(repo, p), c);
  };
  w("src/app.js", lines(100, "app"));
  w("src/util.js", lines(20, "util"));
  w("docs/guide.md", "# Guide\n\nIntro.\n\n## Usage\n\nRun it.\n");
  w("win.txt", "one\r\ntwo\r\nthree\r\n");
  w("nonl.txt", "no newline at end");
  w("withnl.txt", "has newline\n");
  w("empty.txt", "");
  w("run.sh", "#!/bin/sh\necho run\n");
  w("lib/a.c", lines(30, "a.c"));
  w("lib/b.c", lines(30, "b.c"));
  w("old/one.txt", "1\n");
  w("old/two.txt", "2\n");
  w("sql/schema.sql", "create table t (id int);\n-- a comment\n-- another\nselect 1;\n");
  w("spaces in name.txt", "spaces\n");
  w("tabs.txt", "a\tb\nc  \n");
}

type Change = (repo: string) => void;
const write = (repo: string, p: string, c: string) => {
  mkdirSync(join(repo, p, ".."), { recursive: true });
  writeFileSync(join(repo, p), c);
};
const replaceLine = (n: number, text: string, total = 100, tag = "app") =>
  Array.from({ length: total }, (_, i) => (i + 1 === n ? `${text}\n` : `${tag} ${i + 1}\n`)).join(
    "",
  );

const CASES: [string, Change, string[]?][] = [
  ["modify one line in the middle", (r) => write(r, "src/app.js", replaceLine(50, "changed 50"))],
  [
    "two hunks in one file",
    (r) => write(r, "src/app.js", replaceLine(5, "x").replace("app 95\n", "y\n")),
  ],
  ["change the first line", (r) => write(r, "src/app.js", replaceLine(1, "first"))],
  ["change the last line", (r) => write(r, "src/app.js", replaceLine(100, "last"))],
  ["insert at the beginning", (r) => write(r, "src/util.js", `// header\n${lines(20, "util")}`)],
  ["append at the end", (r) => write(r, "src/util.js", `${lines(20, "util")}// footer\n`)],
  ["replace a whole file", (r) => write(r, "src/util.js", lines(7, "rewritten"))],
  ["add a new file", (r) => write(r, "new.txt", "brand new\n")],
  ["add a file in new nested folders", (r) => write(r, "a/b/c/d.txt", "deep\n")],
  ["delete a file", (r) => rmSync(join(r, "lib/b.c"))],
  ["delete a whole folder", (r) => rmSync(join(r, "old"), { recursive: true })],
  ["pure rename", (r) => renameSync(join(r, "lib/a.c"), join(r, "lib/renamed.c"))],
  [
    "rename with changes",
    (r) => {
      renameSync(join(r, "lib/a.c"), join(r, "lib/moved.c"));
      write(r, "lib/moved.c", lines(30, "a.c").replace("a.c 10\n", "ten\n"));
    },
  ],
  [
    "rename into another folder",
    (r) => {
      mkdirSync(join(r, "archive"));
      renameSync(join(r, "docs/guide.md"), join(r, "archive/guide.md"));
    },
  ],
  ["mode change only", (r) => chmodSync(join(r, "run.sh"), 0o755)],
  [
    "mode change with content",
    (r) => {
      write(r, "run.sh", "#!/bin/sh\necho run fast\n");
      chmodSync(join(r, "run.sh"), 0o755);
    },
  ],
  [
    "new executable file",
    (r) => {
      write(r, "bin/tool", "#!/bin/sh\nexit 0\n");
      chmodSync(join(r, "bin/tool"), 0o755);
    },
  ],
  ["CRLF file modified", (r) => write(r, "win.txt", "one\r\nTWO\r\nthree\r\n")],
  ["CRLF new file", (r) => write(r, "dos.txt", "a\r\nb\r\n")],
  ["CRLF to LF", (r) => write(r, "win.txt", "one\ntwo\nthree\n")],
  [
    "append to a file without trailing newline",
    (r) => write(r, "nonl.txt", "no newline at end\nmore"),
  ],
  ["add the missing trailing newline", (r) => write(r, "nonl.txt", "no newline at end\n")],
  ["remove the trailing newline", (r) => write(r, "withnl.txt", "has newline")],
  ["new file without trailing newline", (r) => write(r, "bare.txt", "x")],
  ["create an empty file", (r) => write(r, "blank.txt", "")],
  ["delete an empty file", (r) => rmSync(join(r, "empty.txt"))],
  ["fill an empty file", (r) => write(r, "empty.txt", "now full\n")],
  [
    "many files at once",
    (r) => {
      write(r, "src/app.js", replaceLine(30, "thirty"));
      write(r, "docs/guide.md", "# Guide\n\nIntro, longer.\n\n## Usage\n\nRun it.\n");
      write(r, "lib/b.c", lines(31, "b.c"));
    },
  ],
  [
    "rename, delete and add together",
    (r) => {
      renameSync(join(r, "lib/b.c"), join(r, "lib/c.c"));
      rmSync(join(r, "old/one.txt"));
      write(r, "fresh.txt", "fresh\n");
    },
  ],
  [
    "remove SQL comment lines that start with --",
    (r) => write(r, "sql/schema.sql", "create table t (id int);\nselect 1;\n"),
  ],
  ["a path with spaces", (r) => write(r, "spaces in name.txt", "spaces changed\n")],
  ["a non-ASCII path (quoted by git)", (r) => write(r, "docs/résumé ü.md", "unicode\n")],
  ["whitespace-only changes", (r) => write(r, "tabs.txt", "a    b\nc\n")],
  ["one line of context", (r) => write(r, "src/app.js", replaceLine(60, "sixty")), ["-U1"]],
  [
    "copy detection",
    (r) => write(r, "lib/a-copy.c", `${lines(30, "a.c")}extra\n`),
    ["-C", "--find-copies-harder"],
  ],
];

describe("a corpus of real-world patches", () => {
  let sb: Sandbox;
  let fx: Effects;
  let lab: string;
  let target: string;
  let base: string;
  const patches: { name: string; patch: string; expectTree: string }[] = [];

  beforeAll(() => {
    sb = sandbox();
    lab = join(sb.dir, "lab");
    mkdirSync(lab);
    git(lab, "init", "-q", "-b", "main");
    seedBase(lab);
    git(lab, "add", "-A");
    git(lab, "commit", "-qm", "base");
    base = git(lab, "rev-parse", "HEAD");
    for (const [name, change, args] of CASES) {
      change(lab);
      git(lab, "add", "-A");
      const expectTree = git(lab, "write-tree");
      const patch = gitRaw(lab, ["diff", "--cached", "-M", ...(args ?? [])]);
      git(lab, "reset", "-q", "--hard", base);
      git(lab, "clean", "-qfd");
      patches.push({ name, patch, expectTree });
    }
    // format-patch output (mail headers before the diff) for two of them
    write(lab, "src/util.js", lines(21, "util"));
    git(lab, "commit", "-qam", "mail patch");
    patches.push({
      name: "format-patch mail",
      patch: gitRaw(lab, ["format-patch", "-1", "--stdout"]),
      expectTree: git(lab, "rev-parse", "HEAD^{tree}"),
    });
    git(lab, "reset", "-q", "--hard", base);
    target = join(sb.dir, "target");
    git(sb.dir, "clone", "-q", "--bare", lab, target);
    const branches = patches.map((_, i) => `p${i}`);
    for (const b of branches) git(target, "branch", b, base);
    addRepoConfig(sb, target, branches);
    fx = createEffects(sb.config, { clock: clock() });
  });
  afterAll(async () => {
    await fx?.close();
    sb?.cleanup();
  });

  it(`has at least 30 patches`, () => {
    expect(patches.length).toBeGreaterThanOrEqual(30);
  });

  for (let i = 0; i < CASES.length + 1; i++) {
    it(`applies and probes patch ${i}: ${i < CASES.length ? CASES[i]?.[0] : "format-patch mail"}`, async () => {
      const { patch, expectTree } = patches[i] as (typeof patches)[number];
      const s = patchSpec(patch, { branch: `p${i}` });
      const p = await fx.probe(s, `corpus/${i}`);
      expect(p).toEqual({ status: "absent", detail: { base } });
      const d = await fx.apply(s, `corpus/${i}`, { probed: p });
      expect(git(target, "rev-parse", `${d.commit}^{tree}`)).toBe(expectTree);
      expect(await fx.probe(s, `corpus/${i}`)).toEqual({
        status: "present",
        detail: { commit: d.commit },
      });
      // The same patch under another key is found by the reverse probe, including the cases git
      // apply cannot tell by itself: a mode-only change (it applies forward again) and a copy (it
      // does not reverse).
      const other = await fx.probe(s, `corpus/${i}-again`);
      expect(other.status).toBe("present");
    });
  }
});

function addRepoConfig(sb: Sandbox, path: string, branches: string[]): void {
  configSection(sb.config, "repos").site = {
    path,
    branch: "main",
    branches,
    author: { name: "idem", email: "idem@localhost" },
  };
}
