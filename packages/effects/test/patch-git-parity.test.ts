// Issue 31, finding 5: a git.patch with git's older rename headers (`rename old` / `rename new`)
// passed the checks, and the in-process reader, which did not know them, committed git's deletion
// of the old path without the new one. Each patch here must end as `git apply` ends on the same
// base: the same tree when git applies it, refused before record or never applied when git refuses.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { isIdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { gitHeaderName } from "../../git/src/patch/patch-paths.js";
import { createEffects, type Effects } from "../src/index.js";
import { staticEffectIssues } from "../src/static-checks.js";
import { addRepo, clock, git, patchSpec, type Sandbox, sandbox } from "./helpers.js";

let sb: Sandbox | undefined;
let fx: Effects | undefined;
afterEach(async () => {
  await fx?.close();
  sb?.cleanup();
  fx = undefined;
  sb = undefined;
});

const A = "one\ntwo\nthree\n";
const hunk = "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";

/** Patches with git's rename and copy headers in their old and new spellings. */
/** Each case: its name, the patch, and whether idem must apply it when git does (or may refuse it). */
const PATCHES: [string, string, "apply" | "may-refuse"][] = [
  [
    "rename old/new, pure",
    "diff --git a/a.txt b/MOVED.txt\nsimilarity index 100%\nrename old a.txt\nrename new MOVED.txt\n",
    "apply",
  ],
  [
    "rename old/new with a hunk",
    `diff --git a/a.txt b/MOVED.txt\nsimilarity index 90%\nrename old a.txt\nrename new MOVED.txt\n--- a/a.txt\n+++ b/MOVED.txt\n${hunk}`,
    "apply",
  ],
  [
    "rename from/to, pure",
    "diff --git a/a.txt b/MOVED.txt\nsimilarity index 100%\nrename from a.txt\nrename to MOVED.txt\n",
    "apply",
  ],
  [
    "rename old, then rename to",
    "diff --git a/a.txt b/MOVED.txt\nsimilarity index 100%\nrename old a.txt\nrename to MOVED.txt\n",
    "apply",
  ],
  [
    "copy from/to, pure",
    "diff --git a/a.txt b/COPY.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to COPY.txt\n",
    "apply",
  ],
  [
    "copy old/new (not git's: it ignores both lines)",
    "diff --git a/a.txt b/COPY.txt\nsimilarity index 100%\ncopy old a.txt\ncopy new COPY.txt\n",
    "may-refuse",
  ],
  [
    "copy old/new with ---/+++ lines",
    `diff --git a/a.txt b/COPY.txt\ncopy old a.txt\ncopy new COPY.txt\n--- a/a.txt\n+++ b/COPY.txt\n${hunk}`,
    "apply",
  ],
  [
    "rename new naming a folder's file",
    "diff --git a/a.txt b/d/e/MOVED.txt\nsimilarity index 100%\nrename old a.txt\nrename new d/e/MOVED.txt\n",
    "apply",
  ],
  [
    "a rename whose header holds `.git/` inside a name (x.git/y)",
    "diff --git a/a.txt b/x.git/y\nsimilarity index 100%\nrename from a.txt\nrename to x.git/y\n",
    "apply",
  ],
  [
    "a deletion whose header has other prefixes than a/ and b/",
    "diff --git x/a.txt y/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n",
    "apply",
  ],
  [
    "a mode change named by the header alone, other prefixes",
    "diff --git x/a.txt y/a.txt\nold mode 100644\nnew mode 100755\n",
    "apply",
  ],
  [
    "a modification whose ---/+++ names differ",
    `diff --git a/a.txt b/OTHER.txt\n--- a/a.txt\n+++ b/OTHER.txt\n${hunk}`,
    "apply",
  ],
];

/** `git apply --cached` on a fresh index of `main`: the tree it leaves, or null when it refuses. */
function gitApplyTree(repo: string, patch: string): string | null {
  const run = (args: string[], input?: string) =>
    execFileSync("git", args, {
      cwd: repo,
      input,
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, GIT_INDEX_FILE: join(repo, ".git", "parity-index") },
    });
  run(["read-tree", "main"]);
  try {
    run(["apply", "--cached", "--whitespace=nowarn"], patch);
  } catch {
    return null;
  }
  return run(["write-tree"]).trim();
}

describe("git.patch ends as git apply ends", () => {
  it.each(PATCHES)("%s", async (_name, patch, must) => {
    sb = sandbox();
    const repo = addRepo(sb);
    writeFileSync(join(repo, "a.txt"), A);
    git(repo, "add", "a.txt");
    git(repo, "commit", "-qm", "a");
    const want = gitApplyTree(repo, patch);
    const spec = patchSpec(patch);
    const issues = staticEffectIssues([spec], sb.config);
    if (issues.length > 0) {
      // Refused before record, naming the field: allowed where git refuses too, or for a case
      // idem may choose to refuse.
      expect(issues[0]?.path).toBe("effects.0.patch");
      expect(want === null || must === "may-refuse", issues[0]?.message).toBe(true);
      return;
    }
    fx = createEffects(sb.config, { clock: clock() });
    const before = git(repo, "rev-parse", "main");
    let applied = false;
    try {
      const p = await fx.probe(spec, "k-1/0");
      if (p.status === "absent") {
        await fx.apply(spec, "k-1/0", { probed: p });
        applied = true;
      }
    } catch (e) {
      if (!isIdemError(e)) throw e;
    }
    if (want === null) {
      expect(applied, "git refuses this patch; idem must not commit it").toBe(false);
      expect(git(repo, "rev-parse", "main")).toBe(before);
    } else {
      expect(applied, "git applies this patch; so must idem").toBe(true);
      expect(git(repo, "rev-parse", "main^{tree}")).toBe(want);
      expect(git(repo, "status", "--porcelain")).toBe("");
    }
  });
});

describe("gitHeaderName", () => {
  it.each([
    ["a/x b/x", "x"],
    ["x/a b.txt y/a b.txt", "a b.txt"],
    ["a/x\tb/x", "x"],
    ["a/x.git/y b/x.git/y", "x.git/y"],
    ["a/x b/y", null],
    ["/x /x", null],
    ["a/x", null],
  ])("reads %j as git does: %j", (rest, name) => {
    expect(gitHeaderName(rest)).toBe(name);
  });
});
