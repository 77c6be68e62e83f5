// Where a pull request's head branch comes from (docs/kinds/github.md): a git.commit earlier in the
// same output pushes its commits onto the branch on the remote repository, and the pull request
// is opened from it after.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { configSection, createBareRepo } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createEffects } from "../../src/index.js";
import { githubPullRequestKind } from "../../src/kinds/github-pull-request/github-pull-request-kind.js";
import { clock, sandbox } from "../helpers.js";
import { githubFixture } from "./github-fixture.js";
import { expectIdemError, interpret, rejection } from "./kind-calls.js";

describe("github.pull_request after a git.commit of the same output", () => {
  it("opens the pull request from the branch the commit pushed, and only once it is pushed", async () => {
    const sb = sandbox();
    const bare = join(sb.dir, "app.git");
    createBareRepo(bare);
    // idem's git effects commit onto a branch the remote has (they create one only in an empty
    // repository): the head branch is made once, here at main's commit, as an operator would.
    execFileSync("git", ["--git-dir", bare, "update-ref", "refs/heads/release-notes", "main"]);
    configSection(sb.config, "repos")["app-git"] = {
      url: `file://${bare}`,
      cacheDir: join(sb.dir, "mirror.git"),
      branch: "main",
      branches: ["release-notes"],
      author: { name: "idem", email: "idem@localhost" },
    };
    const effects = createEffects(sb.config, { clock: clock() });
    try {
      await using fx = await githubFixture({ gitDir: bare });
      const pr = fx.open(githubPullRequestKind);
      const since = Date.now();
      const open = pr.check({
        kind: "github.pull_request",
        repo: "app",
        title: "Release notes",
        head: "release-notes",
      });
      // Before the push the head has no commits over main: GitHub refuses, nothing is opened.
      const early = await rejection(interpret(pr, open, "out-1/1", since));
      expectIdemError(early, "TARGET_CONFLICT");
      expect(fx.gh.pullRequests("acme", "app")).toEqual([]);
      // The output's effect 0 pushes the branch; effect 1 opens the pull request from it.
      const commit = {
        kind: "git.commit" as const,
        repo: "app-git",
        branch: "release-notes",
        message: "notes: release 1.4",
        files: [{ path: "notes/1.4.md", content: "# 1.4\n" }],
      };
      const probed = await effects.probe(commit, "out-1/0");
      expect(probed.status).toBe("absent");
      await effects.apply(commit, "out-1/0", { probed: probed });
      expect((await interpret(pr, open, "out-1/1", since)).outcome).toBe("applied");
      expect(fx.gh.pullRequests("acme", "app")).toMatchObject([
        { head: "release-notes", base: "main", state: "open" },
      ]);
      fx.gh.assertNoViolations();
    } finally {
      await effects.close();
      sb.cleanup();
    }
  });
});
