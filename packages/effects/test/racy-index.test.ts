// Found by the end-to-end fuzz suite (issue 31): a file committed by a human in the same second as
// the index was written is "racily clean", and git smudges its entry when it writes the index, so
// that stat data alone can no longer vouch for it. `read-tree -m -u` (the sync when attributes
// are on the way) trusts stat data and took such a file for changed: DIRTY_WORKTREE, nothing done.
// git checkout refreshes the index first; so does idem now.
import { statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, clock, git, patchSpec, type Sandbox, sandbox } from "./helpers.js";

let sb: Sandbox | undefined;
let fx: Effects | undefined;
afterEach(async () => {
  await fx?.close();
  sb?.cleanup();
});

describe("a checked-out branch with racily clean index entries", () => {
  it("follows an effect that removes such a file where attributes make git do the sync", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    writeFileSync(join(repo, ".gitattributes"), "*.txt text\n");
    writeFileSync(join(repo, "old.txt"), "one\ntwo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "human");
    // An index whose entries stat data cannot vouch for: git smudges a racily clean entry (a
    // commit in the same second as the edit) to size 0; `read-tree` leaves no stat data at all.
    // `git status` still says clean: it compares the content.
    const { mtime } = statSync(join(repo, "old.txt"));
    utimesSync(join(repo, ".git", "index"), mtime, mtime);
    git(repo, "read-tree", "HEAD");
    expect(git(repo, "--no-optional-locks", "status", "--porcelain")).toBe("");
    expect(git(repo, "ls-files", "--debug", "old.txt")).toMatch(/size: 0\b/);
    fx = createEffects(sb.config, { clock: clock() });
    const spec = patchSpec(
      "diff --git a/old.txt b/new.txt\nsimilarity index 100%\nrename from old.txt\nrename to new.txt\n",
    );
    const probed = await fx.probe(spec, "racy-1/0");
    expect(probed.status).toBe("absent");
    await fx.apply(spec, "racy-1/0", { probed: probed });
    expect(git(repo, "ls-files")).toBe(".gitattributes\nREADME.md\nnew.txt");
    expect(git(repo, "status", "--porcelain")).toBe("");
  });
});
