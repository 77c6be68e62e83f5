import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyPlainPatch } from "../../git/src/patch/patch-apply.js";
import {
  type BaseFile,
  isPlainPath,
  type PlainResult,
  parsePlainPatch,
} from "../../git/src/patch/patch-parse.js";
import { parseIndex } from "../../git/src/plumbing/git-index.js";
import {
  objectId,
  serializeTree,
  TREE_MODE,
  type TreeEntry,
  writeLooseObject,
} from "../../git/src/plumbing/git-objects.js";
import { createEffects } from "../src/index.js";
import { addRepo, clock, git, gitRaw, patchSpec, type Sandbox, sandbox } from "./helpers.js";

/** Files of a tree: path -> mode and content. */
type Files = Map<string, { mode: string; content: Buffer }>;

/**
 * A scratch repository where trees are written in process and git answers: `git diff-tree -p`
 * makes patches, `git apply --cached --whitespace=nowarn` (what git.patch runs) applies them.
 */
class Lab {
  readonly objects: string;
  private n = 0;
  constructor(readonly dir: string) {
    mkdirSync(dir);
    git(dir, "init", "-q", "--bare");
    this.objects = join(dir, "objects");
  }

  async tree(files: Files): Promise<string> {
    const root: Map<string, unknown> = new Map();
    for (const [p, f] of files) {
      const parts = p.split("/");
      let cur = root;
      for (const d of parts.slice(0, -1)) {
        let next = cur.get(`${d}/`) as Map<string, unknown> | undefined;
        if (!next) {
          next = new Map();
          cur.set(`${d}/`, next);
        }
        cur = next;
      }
      cur.set(parts[parts.length - 1] as string, f);
    }
    const write = async (m: Map<string, unknown>): Promise<string> => {
      const entries: TreeEntry[] = [];
      for (const [name, v] of m) {
        if (name.endsWith("/")) {
          entries.push({ mode: TREE_MODE, name: name.slice(0, -1), oid: await write(v as never) });
        } else {
          const f = v as { mode: string; content: Buffer };
          const oid = await writeLooseObject({
            objectsDir: this.objects,
            format: "sha1",
            type: "blob",
            body: f.content,
            durable: false,
          });
          entries.push({ mode: f.mode, name, oid });
        }
      }
      return writeLooseObject({
        objectsDir: this.objects,
        format: "sha1",
        type: "tree",
        body: serializeTree(entries),
        durable: false,
      });
    };
    return write(root);
  }

  diff(a: string, b: string, context: number): string {
    return gitRaw(this.dir, ["diff-tree", "-p", `-U${context}`, a, b]);
  }

  /** git's answer: the entries (mode, blob id) after `git apply --cached` of `patch` on `tree`. */
  apply(tree: string, patch: Buffer): { ok: boolean; entries: Entries } {
    const index = join(this.dir, `apply-${this.n++}.index`);
    const env = { ...process.env, GIT_INDEX_FILE: index };
    execFileSync("git", ["read-tree", tree], { cwd: this.dir, env });
    const r = spawnSync("git", ["apply", "--cached", "--whitespace=nowarn"], {
      cwd: this.dir,
      env,
      input: patch,
    });
    const entries: Entries = new Map();
    if (r.status === 0) {
      const parsed = parseIndex(readFileSync(index), "sha1");
      if (!parsed.ok) throw new Error(parsed.reason);
      for (const e of parsed.index.entries)
        entries.set(e.path, `${(e.stat[6] as number).toString(8)} ${e.oid}`);
    }
    rmSync(index, { force: true });
    return { ok: r.status === 0, entries };
  }
}

/** Index entries: path -> "mode oid". */
type Entries = Map<string, string>;

/** The in-process applier's view of a set of files. */
function baseOf(files: Files): (path: string) => BaseFile {
  return (p) => {
    const f = files.get(p);
    if (f) return { kind: "file", mode: f.mode, content: f.content };
    for (const k of files.keys()) if (k.startsWith(`${p}/`)) return { kind: "other" };
    const parts = p.split("/");
    for (let i = 1; i < parts.length; i++) {
      if (files.has(parts.slice(0, i).join("/"))) return { kind: "other" };
    }
    return { kind: "absent" };
  };
}

function inProcess(files: Files, patch: Buffer): PlainResult[] | null {
  const sections = parsePlainPatch(patch);
  return sections ? applyPlainPatch(sections, baseOf(files)) : null;
}

/** The entries `files` leave after the in-process results. */
function expected(files: Files, results: PlainResult[]): Entries {
  const after: Files = new Map(files);
  for (const r of results) {
    if (r.content) after.set(r.path, { mode: r.mode, content: r.content });
    else after.delete(r.path);
  }
  const out: Entries = new Map();
  for (const p of [...after.keys()].sort((a, b) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b)),
  )) {
    const f = after.get(p) as { mode: string; content: Buffer };
    out.set(p, `${f.mode} ${objectId("sha1", "blob", f.content)}`);
  }
  return out;
}

const files = (entries: Record<string, string | [string, string]>): Files =>
  new Map(
    Object.entries(entries).map(([p, v]) => [
      p,
      typeof v === "string"
        ? { mode: "100644", content: Buffer.from(v) }
        : { mode: v[0], content: Buffer.from(v[1]) },
    ]),
  );

/** A small deterministic generator (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)] as T };
}
type Rng = ReturnType<typeof rng>;

// Few distinct lines, so contexts repeat and near-misses (whitespace, prefixes) are common.
const VOCAB = [
  "a",
  "b",
  "c",
  "x",
  "{",
  "}",
  "",
  " a",
  "a ",
  "\ta",
  "ab",
  "a b",
  "return 0;",
  "end",
];
const PATHS = ["f.txt", "g.txt", "d/h.txt", "d/e/i.txt", "run.sh", "n/new.txt"];

function randomText(r: Rng): Buffer {
  if (r.next() < 0.08) return Buffer.alloc(0);
  const lines = Array.from({ length: 1 + r.int(r.next() < 0.1 ? 200 : 24) }, () => r.pick(VOCAB));
  return Buffer.from(lines.join("\n") + (r.next() < 0.8 ? "\n" : ""));
}

function editText(r: Rng, content: Buffer): Buffer {
  const text = content.toString();
  const eol = text.endsWith("\n") || text === "";
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  for (let k = 1 + r.int(4); k > 0; k--) {
    const at = r.int(lines.length + 1);
    const op = r.int(3);
    if (op === 0) lines.splice(at, 0, ...Array.from({ length: 1 + r.int(3) }, () => r.pick(VOCAB)));
    else if (op === 1) lines.splice(at, 1 + r.int(3));
    else if (at < lines.length) lines[at] = r.pick(VOCAB);
  }
  const keepEol = r.next() < 0.15 ? !eol : eol;
  if (lines.length === 0) return Buffer.alloc(0);
  return Buffer.from(lines.join("\n") + (keepEol ? "\n" : ""));
}

function randomBase(r: Rng): Files {
  const out: Files = new Map();
  for (const p of PATHS.slice(0, 5)) {
    if (r.next() < 0.7)
      out.set(p, { mode: p === "run.sh" ? "100755" : "100644", content: randomText(r) });
  }
  return out;
}

function changed(r: Rng, base: Files): Files {
  const out: Files = new Map(base);
  for (let k = 1 + r.int(3); k > 0; k--) {
    const p = r.pick(PATHS);
    const f = out.get(p);
    const roll = r.next();
    if (!f) {
      if (![...out.keys()].some((q) => q.startsWith(`${p}/`)))
        out.set(p, { mode: r.next() < 0.2 ? "100755" : "100644", content: randomText(r) });
    } else if (roll < 0.75) out.set(p, { mode: f.mode, content: editText(r, f.content) });
    else if (roll < 0.92) out.delete(p);
    else out.set(p, { mode: f.mode === "100644" ? "100755" : "100644", content: f.content });
  }
  return out;
}

/** Changes to the patch text that git may or may not accept: each is judged by git itself. */
function mutate(r: Rng, patch: string): string {
  const lines = patch.split("\n");
  const hunkAt = lines.flatMap((l, i) => (l.startsWith("@@ -") ? [i] : []));
  switch (r.int(7)) {
    case 0: {
      // Wrong line numbers: git searches around them.
      if (hunkAt.length === 0) return patch;
      const i = r.pick(hunkAt);
      lines[i] = (lines[i] as string).replace(
        /\+(\d+)/,
        (_, n) => `+${Math.max(0, Number(n) + r.int(11) - 5)}`,
      );
      if (r.next() < 0.5)
        lines[i] = (lines[i] as string).replace(
          /-(\d+)/,
          (_, n) => `-${Math.max(0, Number(n) + r.int(11) - 5)}`,
        );
      return lines.join("\n");
    }
    case 1: {
      // A lost "\ No newline at end of file".
      const i = lines.findIndex((l) => l.startsWith("\\ "));
      if (i >= 0) lines.splice(i, 1);
      return lines.join("\n");
    }
    case 2:
      // Blank context lines written as empty lines, as editors and mailers leave them.
      return lines.map((l) => (l === " " ? "" : l)).join("\n");
    case 3:
      return `${patch}\n\n`;
    case 4: {
      // A context line that differs from the file.
      const ctx = lines.flatMap((l, i) => (l.startsWith(" ") ? [i] : []));
      if (ctx.length === 0) return patch;
      const i = r.pick(ctx);
      lines[i] = ` ${r.pick(VOCAB)}`;
      return lines.join("\n");
    }
    case 5: {
      // Whitespace added to a context line: git applies no fuzz.
      const ctx = lines.flatMap((l, i) => (l.startsWith(" ") ? [i] : []));
      if (ctx.length === 0) return patch;
      const i = r.pick(ctx);
      lines[i] = `${lines[i]} `;
      return lines.join("\n");
    }
    default: {
      // Hunks of a file in the wrong order.
      if (hunkAt.length < 2) return patch;
      const a = hunkAt[0] as number;
      const b = hunkAt[1] as number;
      const first = lines.slice(a, b);
      let end = b + 1;
      while (end < lines.length && !/^(@@ -|diff --git )/.test(lines[end] as string)) end++;
      if (end >= lines.length) end = lines.length - 1;
      const second = lines.slice(b, end);
      lines.splice(a, end - a, ...second, ...first);
      return lines.join("\n");
    }
  }
}

describe("the in-process git apply", () => {
  let sb: Sandbox;
  let lab: Lab;
  beforeAll(() => {
    sb = sandbox();
    lab = new Lab(join(sb.dir, "lab"));
  });
  afterAll(() => sb?.cleanup());

  /** Applies in process and with git; whenever the in-process apply answers, git agrees exactly. */
  async function compare(base: Files, patch: string | Buffer) {
    const bytes = typeof patch === "string" ? Buffer.from(patch) : patch;
    const mine = inProcess(base, bytes);
    const theirs = lab.apply(await lab.tree(base), bytes);
    if (mine) {
      expect(theirs.ok, `git refused a patch applied in process:\n${bytes}`).toBe(true);
      expect([...theirs.entries]).toEqual([...expected(base, mine)]);
    }
    return { mine, theirs };
  }

  it("agrees with git on a modification, a new file and a deletion together", async () => {
    const base = files({ "a.txt": "1\n2\n3\n", "gone.txt": "bye\n", "x.sh": ["100755", "x\n"] });
    const patch = [
      "diff --git a/a.txt b/a.txt",
      "index 01e79c3..1aa9d23 100644",
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,3 +1,3 @@",
      " 1",
      "-2",
      "+two",
      " 3",
      "diff --git a/gone.txt b/gone.txt",
      "deleted file mode 100644",
      "index b023018..0000000",
      "--- a/gone.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
      "diff --git a/n/new.sh b/n/new.sh",
      "new file mode 100755",
      "index 0000000..e69de29",
      "--- /dev/null",
      "+++ b/n/new.sh",
      "@@ -0,0 +1,2 @@",
      "+#!/bin/sh",
      "+exit 0",
      "diff --git a/x.sh b/x.sh",
      "--- a/x.sh",
      "+++ b/x.sh",
      "@@ -1 +1 @@",
      "-x",
      "+y",
      "",
    ].join("\n");
    const { mine } = await compare(base, patch);
    expect(mine?.map((m) => [m.path, m.mode, m.content?.toString() ?? null])).toEqual([
      ["a.txt", "100644", "1\ntwo\n3\n"],
      ["gone.txt", "100644", null],
      ["n/new.sh", "100755", "#!/bin/sh\nexit 0\n"],
      ["x.sh", "100755", "y\n"],
    ]);
  });

  it("finds a hunk at an offset, and picks the same copy of a repeated context git picks", async () => {
    const body = "k\nk\nk\nv\nk\nk\nk\n";
    const base = files({ "r.txt": `${body}${body}${body}` });
    for (const at of [1, 4, 8, 11, 15, 19]) {
      const patch = `diff --git a/r.txt b/r.txt\n--- a/r.txt\n+++ b/r.txt\n@@ -${at},7 +${at},7 @@\n k\n k\n k\n-v\n+V\n k\n k\n k\n`;
      const { mine } = await compare(base, patch);
      expect(mine).not.toBeNull();
    }
  });

  it("keeps a hunk that starts at line 1, or has no trailing context, to the start or end", async () => {
    const base = files({ "s.txt": "top\na\nb\nc\n" });
    const atStart =
      "diff --git a/s.txt b/s.txt\n--- a/s.txt\n+++ b/s.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
    expect((await compare(base, atStart)).theirs.ok).toBe(false);
    const atEnd =
      "diff --git a/s.txt b/s.txt\n--- a/s.txt\n+++ b/s.txt\n@@ -2,2 +2,2 @@\n a\n-b\n+B\n";
    expect((await compare(base, atEnd)).theirs.ok).toBe(false);
    const zero = "diff --git a/s.txt b/s.txt\n--- a/s.txt\n+++ b/s.txt\n@@ -2,0 +3 @@\n+new\n";
    const r = await compare(base, zero);
    expect(r.mine?.[0]?.content?.toString()).toBe("top\na\nb\nc\nnew\n");
  });

  it("handles the missing newline at the end of a file on either side", async () => {
    const marker = "\\ No newline at end of file";
    const base = files({ "e.txt": "a\nb", "f.txt": "a\nb\n" });
    for (const patch of [
      `diff --git a/e.txt b/e.txt\n--- a/e.txt\n+++ b/e.txt\n@@ -1,2 +1,2 @@\n a\n-b\n${marker}\n+b\n`,
      `diff --git a/e.txt b/e.txt\n--- a/e.txt\n+++ b/e.txt\n@@ -1,2 +1,3 @@\n a\n-b\n${marker}\n+b\n+c\n${marker}\n`,
      `diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n${marker}\n`,
      `diff --git a/e.txt b/e.txt\n--- a/e.txt\n+++ b/e.txt\n@@ -1,2 +1,3 @@\n+z\n a\n b\n${marker}\n`,
    ]) {
      expect((await compare(base, patch)).mine).not.toBeNull();
    }
    // The file has a newline where the patch says it has none: git's answer, not a guess.
    const wrong = `diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n${marker}\n`;
    expect((await compare(base, wrong)).mine).toBeNull();
  });

  it("leaves to git a line whose start matches a context line that has no newline", async () => {
    // git compares a whitespace-blind hash of the line, then only the patch's bytes: "ab" may
    // match the start of "ab \n". The in-process apply does not guess.
    const base = files({ "q.txt": "x\nab \ny\n" });
    const patch = `diff --git a/q.txt b/q.txt\n--- a/q.txt\n+++ b/q.txt\n@@ -1,2 +1,2 @@\n-x\n+X\n ab\n\\ No newline at end of file\n`;
    expect((await compare(base, patch)).mine).toBeNull();
  });

  it("never lets a hunk match lines an earlier hunk of the file already patched", async () => {
    const base = files({ "o.txt": "a\nb\nc\nd\n" });
    const patch =
      "diff --git a/o.txt b/o.txt\n--- a/o.txt\n+++ b/o.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -2,3 +2,3 @@\n B\n-c\n+C\n d\n";
    const r = await compare(base, patch);
    expect(r.theirs.ok).toBe(false);
    expect(r.mine).toBeNull();
  });

  it("reads an empty line in a hunk as a blank context line, as git does", async () => {
    const end = files({ "c.txt": "a\nb\n\n" });
    const last =
      "diff --git a/c.txt b/c.txt\n--- a/c.txt\n+++ b/c.txt\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n\n";
    expect((await compare(end, last)).mine?.[0]?.content?.toString()).toBe("A\nb\n\n");
    expect((await compare(end, `${last}\n\n`)).mine).not.toBeNull();
    const base = files({ "b.txt": "a\n\nb\n" });
    const patch =
      "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n";
    expect((await compare(base, patch)).mine?.[0]?.content?.toString()).toBe("a\n\nB\n");
  });

  it("answers nothing outside the plain subset, so git decides", async () => {
    const base = files({ "a.txt": "1\n", "d/x.txt": "x\n" });
    const plain = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-1\n+2\n";
    expect((await compare(base, plain)).mine).not.toBeNull();
    // The function name git diff writes after a hunk header is ignored, by git too.
    expect(
      (await compare(base, plain.replace("@@ -1 +1 @@", "@@ -1 +1 @@ f()"))).mine,
    ).not.toBeNull();
    for (const patch of [
      plain.replace(/\n/g, "\r\n"),
      `From 1234 Mon Sep 17 00:00:00 2001\n\n${plain}`,
      `${plain}-- \n2.39.0\n`,
      plain.replace("+2\n", "+2\n\\ No newline\n"),
      plain + plain,
      `${plain}\ngarbage\n`,
      ["n", "n-b", "n/x"]
        .map(
          (p) =>
            `diff --git a/${p} b/${p}\nnew file mode 100644\n--- /dev/null\n+++ b/${p}\n@@ -0,0 +1 @@\n+1\n`,
        )
        .join(""),
      plain.replace("+++ b/a.txt\n", "+++ b/a.txt\nindex 1234567..89abcde 100644\n"),
      "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n",
      "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n",
      'diff --git "a/\\303\\251.txt" "b/\\303\\251.txt"\nnew file mode 100644\n--- /dev/null\n+++ "b/\\303\\251.txt"\n@@ -0,0 +1 @@\n+x\n',
      "diff --git a/e.txt b/e.txt\nnew file mode 100644\nindex 0000000..e69de29\n",
      "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-1\n+2",
      "diff --git a/a b/a.txt b/a b/a.txt\n--- a/a b/a.txt\n+++ b/a b/a.txt\n@@ -1 +1 @@\n-1\n+2\n",
    ]) {
      expect(inProcess(base, Buffer.from(patch)), patch).toBeNull();
    }
    // A new file where a file or folder is, a path under a file, a deletion that leaves lines.
    for (const patch of [
      "diff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+1\n",
      "diff --git a/d b/d\nnew file mode 100644\n--- /dev/null\n+++ b/d\n@@ -0,0 +1 @@\n+1\n",
      "diff --git a/a.txt/y b/a.txt/y\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt/y\n@@ -0,0 +1 @@\n+1\n",
      "diff --git a/d/x.txt b/d/x.txt\ndeleted file mode 100644\n--- a/d/x.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n",
    ]) {
      expect((await compare(base, patch)).mine, patch).toBeNull();
    }
  });

  it("refuses paths git would write differently or refuse", () => {
    for (const p of ["a.txt", "src/x-y_z.c", ".gitignore", ".github/ci.yml", "a+b@c=d,e"])
      expect(isPlainPath(p), p).toBe(true);
    for (const p of [
      ".git/config",
      "x/.GIT/y",
      "x/.git./y",
      "GIT~1/x",
      "a b",
      "a\tb",
      "é",
      "a//b",
      "./a",
      "../a",
      "/a",
      "a/",
      "-a",
      'a"b',
      "a\\b",
    ])
      expect(isPlainPath(p), p).toBe(false);
  });

  const CASES = Number(process.env.IDEM_PATCH_FUZZ_CASES ?? 300);
  it(`agrees with git apply on ${CASES} generated patches, applied as made, to drifted files and mutated`, async () => {
    const r = rng(Number(process.env.IDEM_PATCH_FUZZ_SEED ?? 20261122));
    let mine = 0;
    let theirs = 0;
    let drifted = 0;
    let mutated = 0;
    for (let n = 0; n < CASES; n++) {
      const base = randomBase(r);
      const next = changed(r, base);
      const patch = lab.diff(
        await lab.tree(base),
        await lab.tree(next),
        r.pick([0, 1, 3, 3, 3, 5]),
      );
      if (patch === "") continue;
      let target = base;
      const drift = r.next() < 0.6;
      if (drift) {
        target = new Map(base);
        for (const [p, f] of base) {
          // Other lines changed, and now and then the mode (git warns, keeps the index's mode).
          const mode = r.next() < 0.1 ? (f.mode === "100644" ? "100755" : "100644") : f.mode;
          target.set(p, { mode, content: r.next() < 0.6 ? editText(r, f.content) : f.content });
        }
        if (r.next() < 0.1) target.set("g.txt", { mode: "100644", content: randomText(r) });
      }
      const mutate1 = r.next() < 0.35;
      const text = mutate1 ? mutate(r, patch) : patch;
      const res = await compare(target, text);
      if (res.mine) {
        mine++;
        if (drift) drifted++;
        if (mutate1) mutated++;
      }
      if (res.theirs.ok) theirs++;
    }
    if (process.env.IDEM_PATCH_FUZZ_STATS)
      process.stderr.write(`${JSON.stringify({ mine, theirs, drifted, mutated })}\n`);
    // The comparison means something only if the in-process apply answers for most patches git
    // applies, including moved and mutated ones.
    expect(mine).toBeGreaterThan(theirs * 0.6);
    expect(drifted).toBeGreaterThan(CASES / 20);
    expect(mutated).toBeGreaterThan(CASES / 40);
  }, 300_000);
});

describe("git.patch applied in process", () => {
  let sb: Sandbox;
  afterAll(() => sb?.cleanup());

  it("defers to git where the repo's config changes how git applies (apply.ignoreWhitespace)", async () => {
    sb = sandbox();
    const repo = addRepo(sb, "site");
    git(repo, "config", "apply.ignoreWhitespace", "change");
    execFileSync("sh", ["-c", "printf 'a  b\\nc\\n' > t.txt && git add t.txt"], { cwd: repo });
    git(repo, "-c", "user.name=h", "-c", "user.email=h@x", "commit", "-qm", "t");
    const fx = createEffects(sb.config, { clock: clock() });
    try {
      // The context differs from the file in whitespace only: git with ignoreWhitespace applies it.
      const patch =
        "diff --git a/t.txt b/t.txt\n--- a/t.txt\n+++ b/t.txt\n@@ -1,2 +1,2 @@\n a b\n-c\n+C\n";
      const s = patchSpec(patch);
      const p = await fx.probe(s, "ws/1");
      expect(p.status).toBe("absent");
      await fx.apply(s, "ws/1", { probed: p });
      expect(git(repo, "show", "main:t.txt")).toBe("a  b\nC");
    } finally {
      await fx.close();
    }
  });
});
