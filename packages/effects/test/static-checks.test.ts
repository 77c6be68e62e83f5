import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EffectSpec } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { createEffects } from "../src/create-effects.js";
import { staticEffectIssues } from "../src/static-checks.js";
import {
  addRepo,
  addRoot,
  diffOf,
  git,
  gitRaw,
  patchSpec,
  type Sandbox,
  sandbox,
} from "./helpers.js";

let sb: Sandbox | undefined;
afterEach(() => {
  sb?.cleanup();
  sb = undefined;
});

/** Whether `git apply --check` accepts the patch in `repo`. */
function gitAccepts(repo: string, patch: string): boolean {
  try {
    gitRaw(repo, ["apply", "--check"], patch);
    return true;
  } catch {
    return false;
  }
}

describe("staticEffectIssues", () => {
  it("passes what git diff writes: edits, new and deleted files, renames and mode changes", () => {
    sb = sandbox();
    const repo = addRepo(sb);
    const edit = diffOf(repo, () => writeFileSync(join(repo, "README.md"), "bye\n"));
    const add = diffOf(repo, () => writeFileSync(join(repo, "new.txt"), "n\n"));
    const del = diffOf(repo, () => git(repo, "rm", "-q", "README.md"));
    const mv = diffOf(repo, () => git(repo, "mv", "README.md", "READ.md"));
    const mode = diffOf(repo, () => chmodSync(join(repo, "README.md"), 0o755));
    for (const patch of [edit, add, del, mv, mode]) {
      expect(staticEffectIssues([patchSpec(patch)], sb.config), patch).toEqual([]);
      expect(gitAccepts(repo, patch)).toBe(true);
    }
  });

  it("refuses a hunk shorter than its header, as git apply does", () => {
    sb = sandbox();
    const repo = addRepo(sb);
    const edit = diffOf(repo, () => writeFileSync(join(repo, "README.md"), "bye\n"));
    const short = edit.replace(/@@ -1 \+1 @@/, "@@ -1,2 +1,2 @@");
    expect(gitAccepts(repo, short)).toBe(false);
    expect(staticEffectIssues([patchSpec(short)], sb.config)).toMatchObject([
      { path: "effects.0.patch", message: expect.stringMatching(/corrupt patch/) },
    ]);
  });

  it("refuses exactly what the handlers refuse at apply, with the field the handler names", async () => {
    const box = sandbox();
    sb = box;
    addRepo(box);
    addRoot(box);
    const effects = createEffects(box.config);
    const specs: EffectSpec[] = [
      patchSpec("diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n"),
      { kind: "file.write", root: "outbox", path: "a/../../x", content: "x" },
      {
        kind: "git.commit",
        repo: "site",
        message: "m",
        files: [{ path: ".git/config", content: "x" }],
      },
    ];
    try {
      for (const spec of specs) {
        expect(staticEffectIssues([spec], box.config)[0]?.path).toMatch(/^effects\.0\./);
        await expect(effects.apply(spec, "k/0")).rejects.toMatchObject({
          code: "SANDBOX_VIOLATION",
        });
      }
    } finally {
      await effects.close();
    }
  });
});
