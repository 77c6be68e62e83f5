import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addRepo, git, type Sandbox, sandbox } from "../../effects/test/helpers.js";
import { trailerKeys } from "../src/git-checks.js";
import { KeyIndex } from "../src/key-index.js";
import { RepoObjects } from "../src/plumbing/repo-objects.js";

/** Commit messages a human or idem may leave on a branch, the edge cases of the trailer line. */
const MESSAGES = [
  "write a\n\nIdem-Effect: job-1/0",
  "write b\n\nIdem-Effect: job-2/0   ",
  "two keys\n\nIdem-Effect: job-3/0\nIdem-Effect: job-3/1",
  "not a key: text after it\n\nIdem-Effect: job-4/0 and more",
  "indented\n\n  Idem-Effect: job-5/0",
  "no space\n\nIdem-Effect:job-6/0",
  "Idem-Effect: job-7/0\n\nthe key in the subject line",
  "again\n\nIdem-Effect: job-1/0",
  "plain commit, no key",
];

describe("KeyIndex", () => {
  let sb: Sandbox;
  afterEach(() => sb?.cleanup());

  it("finds every key a full scan of a branch without idem's refs finds, newest commit first", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    const commits: { sha: string; message: string }[] = [];
    for (const message of MESSAGES) {
      git(repo, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message);
      commits.push({ sha: git(repo, "rev-parse", "HEAD"), message });
    }
    // What the sandbox's trailer reader finds, the newest commit of a key winning.
    const expected = new Map<string, string>();
    for (const c of [...commits].reverse()) {
      for (const k of trailerKeys(c.message)) if (!expected.has(k)) expected.set(k, c.sha);
    }
    expect([...expected.keys()].sort()).toEqual(
      ["job-1/0", "job-2/0", "job-3/0", "job-3/1", "job-7/0"].sort(),
    );
    const head = git(repo, "rev-parse", "HEAD");
    // This process's temporary folder, to see the full scan's file go (os.tmpdir() reads TMPDIR).
    const tmp = join(sb.dir, "tmp");
    mkdirSync(tmp);
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    const objects = new RepoObjects("site", repo, false);
    try {
      const index = new KeyIndex(objects);
      const asked = [...expected.keys(), "job-4/0", "job-5/0", "job-6/0", "job-9/0"];
      const found = await index.lookupKeys("main", head, asked);
      expect(new Map([...found].sort())).toEqual(new Map([...expected].sort()));
      // The bounded scan reads the same trailers through its pipe.
      const ranged = await index.scanRange([head]);
      expect(new Map([...ranged].map(([k, shas]) => [k, shas[0]]))).toEqual(found);
      expect(ranged.get("job-1/0")).toEqual([commits[7]?.sha, commits[0]?.sha]);
    } finally {
      objects.close();
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
    expect(readdirSync(tmp)).toEqual([]); // the full scan's file is gone
  });

  it("scans through a pipe when no temporary folder can be made", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    git(repo, "commit", "-q", "--allow-empty", "-m", "one\n\nIdem-Effect: job-1/0");
    const head = git(repo, "rev-parse", "HEAD");
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = join(sb.dir, "missing", "tmp");
    const objects = new RepoObjects("site", repo, false);
    try {
      const found = await new KeyIndex(objects).lookupKeys("main", head, ["job-1/0"]);
      expect(found).toEqual(new Map([["job-1/0", head]]));
    } finally {
      objects.close();
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
  });

  it("extends a branch's cached scan when the branch moves on, keeping keys already found", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    git(repo, "commit", "-q", "--allow-empty", "-m", "one\n\nIdem-Effect: job-1/0");
    const first = git(repo, "rev-parse", "HEAD");
    const objects = new RepoObjects("site", repo, false);
    try {
      const index = new KeyIndex(objects);
      expect(await index.lookupKeys("main", first, ["job-1/0", "job-2/0"])).toEqual(
        new Map([["job-1/0", first]]),
      );
      git(repo, "commit", "-q", "--allow-empty", "-m", "two\n\nIdem-Effect: job-2/0");
      const second = git(repo, "rev-parse", "HEAD");
      expect(await index.lookupKeys("main", second, ["job-1/0", "job-2/0"])).toEqual(
        new Map([
          ["job-1/0", first],
          ["job-2/0", second],
        ]),
      );
    } finally {
      objects.close();
    }
  });
});

describe("KeyIndex, probes at once on a branch without idem's refs", () => {
  let sb: Sandbox;
  afterEach(() => sb?.cleanup());

  it("share one full scan of the same head", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    git(repo, "commit", "-q", "--allow-empty", "-m", "one\n\nIdem-Effect: job-1/0");
    // The scan's file goes through this process's temporary folder: one folder per `git log`.
    const tmp = join(sb.dir, "tmp");
    mkdirSync(tmp);
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    const objects = new RepoObjects("site", repo, false);
    const made: string[] = [];
    const watch = setInterval(() => made.push(...readdirSync(tmp)), 0);
    try {
      const index = new KeyIndex(objects);
      const keys = Array.from({ length: 8 }, (_, i) => `job-${i}/0`);
      const found = await Promise.all(keys.map((k) => index.lookupKey("main", k)));
      expect(found[1]).toEqual({ found: true, commit: git(repo, "rev-parse", "HEAD") });
      expect(found.filter((f) => f.found)).toHaveLength(1);
    } finally {
      clearInterval(watch);
      objects.close();
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
    expect(new Set(made).size).toBeLessThanOrEqual(1);
  });
});
