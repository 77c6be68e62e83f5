// Where a pull request's head branch comes from (docs/kinds/github.md): a git.commit earlier in the
// same output pushes its commits onto the branch on the remote repository, and the pull request
// is opened from it after.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { createBareRepo } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { BUILT_IN_KINDS, checkEffects, createEffects, kindRegistryOf } from "../../src/index.js";
import { githubPullRequestKind } from "../../src/kinds/github-pull-request/github-pull-request-kind.js";
import { addRepo, clock, sandbox } from "../helpers.js";
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
    sb.config.repos["app-git"] = {
      url: `file://${bare}`,
      cacheDir: join(sb.dir, "mirror.git"),
      path: join(sb.dir, "mirror.git"),
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

describe("a pull request per job: a git.commit starts the job's own branch from the base", () => {
  it("makes the branch on the remote from main's tip, commits onto it, and opens its pull request", async () => {
    const sb = sandbox();
    const bare = join(sb.dir, "app.git");
    createBareRepo(bare);
    sb.config.repos["app-git"] = {
      url: `file://${bare}`,
      cacheDir: join(sb.dir, "mirror.git"),
      path: join(sb.dir, "mirror.git"),
      branch: "main",
      // A branch per job: any name under idem/ may be targeted (and made, with `from`).
      branches: ["idem/*"],
      author: { name: "idem", email: "idem@localhost" },
    };
    const effects = createEffects(sb.config, { clock: clock() });
    try {
      await using fx = await githubFixture({ gitDir: bare, pushLagMs: 2000 });
      const pr = fx.open(githubPullRequestKind);
      const since = fx.clock.now();
      for (const job of ["job-7", "job-8"]) {
        const commit = {
          kind: "git.commit" as const,
          repo: "app-git",
          branch: `idem/${job}`,
          from: "main",
          message: `notes: ${job}`,
          files: [{ path: `notes/${job}.md`, content: `# ${job}\n` }],
        };
        expect(checkEffects([commit], sb.config, effects.kinds).ok).toBe(true);
        const probed = await effects.probe(commit, `${job}/0`);
        expect(probed).toMatchObject({ status: "absent", detail: { base: null } });
        const applied = await effects.apply(commit, `${job}/0`, { probed });
        expect(applied).toMatchObject({ commit: expect.any(String) });
        // Applied again (a retry after a lost answer): found on the branch, nothing pushed.
        expect((await effects.probe(commit, `${job}/0`)).status).toBe("present");
        const open = pr.check({
          kind: "github.pull_request",
          repo: "app",
          title: `Notes for ${job}`,
          head: `idem/${job}`,
          base: "main",
        });
        expect((await interpret(pr, open, `${job}/1`, since)).outcome).toBe("applied");
      }
      expect(fx.gh.pullRequests("acme", "app").map((p) => [p.head, p.state])).toEqual([
        ["idem/job-7", "open"],
        ["idem/job-8", "open"],
      ]);
      // Each branch holds main's history and its one commit.
      const log = execFileSync("git", ["--git-dir", bare, "log", "--format=%s", "idem/job-8"], {
        encoding: "utf8",
      });
      expect(log.trim().split("\n")[0]).toBe("notes: job-8");
      fx.gh.assertNoViolations();
    } finally {
      await effects.close();
      sb.cleanup();
    }
  });

  it("refuses from on a repository on this host, and a branch the config does not allow", () => {
    const sb = sandbox();
    try {
      addRepo(sb, "site", { branches: ["idem/*"] });
      const registry = kindRegistryOf(sb.config, BUILT_IN_KINDS);
      const commit = (extra: Record<string, unknown>) => ({
        kind: "git.commit",
        repo: "site",
        message: "m",
        files: [{ path: "a.md", content: "a" }],
        ...extra,
      });
      const refused = (extra: Record<string, unknown>) => {
        const r = checkEffects([commit(extra)], sb.config, registry);
        return r.ok ? [] : r.issues.map((i) => i.path);
      };
      expect(refused({ branch: "idem/job-1", from: "main" })).toEqual(["effects.0.from"]);
      expect(refused({ branch: "other/job-1" })).toEqual(["effects.0.branch"]);
      expect(refused({ branch: "idem/job-1" })).toEqual([]);
    } finally {
      sb.cleanup();
    }
  });
});
