// A repository whose index git cannot read (a power loss, a torn copy): every git command there
// fails the same way, so it is a conflict that ends the run at once naming the runbook's fix, not
// a `logic` failure (it was one, and the runbook's readers could not tell it from a bug).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { classifyError, isIdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { addRepo, type Sandbox, sandbox } from "../../effects/test/helpers.js";
import { GitError, runGit } from "../src/plumbing/run-git.js";

let sb: Sandbox | undefined;
afterEach(() => {
  sb?.cleanup();
  sb = undefined;
});

describe("git on a damaged index", () => {
  it("is TARGET_CONFLICT (class conflict) naming the runbook; any other failure stays a GitError", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    expect((await runGit(repo, ["status", "--porcelain"])).code).toBe(0);
    const other = await runGit(repo, ["rev-parse", "--verify", "no-such-ref"]).catch((e) => e);
    expect(other).toBeInstanceOf(GitError);
    // A header git accepts, then bytes that are no index: what a torn write leaves.
    writeFileSync(
      join(repo, ".git", "index"),
      Buffer.concat([Buffer.from("DIRC"), Buffer.alloc(60, 7)]),
    );
    const e = await runGit(repo, ["status", "--porcelain"]).catch((err: unknown) => err);
    expect(isIdemError(e, "TARGET_CONFLICT")).toBe(true);
    expect(classifyError(e)).toBe("conflict");
    expect((e as Error).message).toMatch(/cannot be read .*docs\/runbook\.md/);
  });
});
