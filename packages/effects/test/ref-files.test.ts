import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GitCommitSpec } from "@idem/effects";
import { isIdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { RefFiles } from "../../git/src/plumbing/ref-files.js";
import { RepoObjects } from "../../git/src/plumbing/repo-objects.js";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, clock, git, type Sandbox, sandbox } from "./helpers.js";

const commitSpec = (path: string, content: string): GitCommitSpec => ({
  kind: "git.commit",
  repo: "site",
  message: `write ${path}`,
  files: [{ path, content }],
});

describe("RefFiles", () => {
  let sb: Sandbox;
  afterEach(() => sb?.cleanup());

  it("reads loose refs, then packed-refs, and sees each change git makes to either", () => {
    sb = sandbox();
    const repo = addRepo(sb);
    const gitDir = join(repo, ".git");
    const refs = new RefFiles(gitDir, 40);
    const head = git(repo, "rev-parse", "HEAD");
    expect(refs.read("refs/heads/main")).toBe(head);
    expect(refs.read("refs/heads/nope")).toBeNull();

    git(repo, "update-ref", "refs/idem/b/main/k/a", head);
    git(repo, "pack-refs", "--all", "--prune");
    expect(refs.read("refs/idem/b/main/k/a")).toBe(head);
    expect(refs.read("refs/heads/main")).toBe(head);

    // A loose ref wins over its packed value, as in git.
    git(repo, "commit", "-q", "--allow-empty", "-m", "second");
    const second = git(repo, "rev-parse", "HEAD");
    expect(refs.read("refs/heads/main")).toBe(second);

    // Deleting a packed ref rewrites packed-refs: the cached parse must not answer the old value.
    git(repo, "update-ref", "-d", "refs/idem/b/main/k/a");
    expect(refs.read("refs/idem/b/main/k/a")).toBeNull();
  });

  it("leaves to git what it cannot read as git would", () => {
    sb = sandbox();
    const repo = addRepo(sb);
    const gitDir = join(repo, ".git");
    git(repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main");
    const refs = new RefFiles(gitDir, 40);
    expect(refs.read("refs/heads/alias")).toBeUndefined();
    expect(refs.read("HEAD")).toBeUndefined();
    expect(refs.read("refs/heads/../HEAD")).toBeUndefined();
    writeFileSync(join(gitDir, "refs", "heads", "torn"), "12ab\n");
    expect(refs.read("refs/heads/torn")).toBeUndefined();
    // A linked worktree keeps its refs elsewhere: every read goes to git.
    const wt = join(sb.dir, "wt");
    git(repo, "worktree", "add", "-q", "-b", "side", wt);
    const linked = new RefFiles(git(wt, "rev-parse", "--absolute-git-dir"), 40);
    expect(linked.read("refs/heads/main")).toBeUndefined();
  });
});

describe("RepoObjects", () => {
  let sb: Sandbox;
  afterEach(() => sb?.cleanup());

  it("answers a branch whose commit is missing as INTEGRITY, not as no branch", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    const head = git(repo, "rev-parse", "HEAD");
    rmSync(join(repo, ".git", "objects", head.slice(0, 2), head.slice(2)));
    const objects = new RepoObjects("site", repo, false);
    try {
      await expect(objects.head("main")).rejects.toSatisfy((e) => isIdemError(e, "INTEGRITY"));
      expect(await objects.head("absent")).toBeNull();
    } finally {
      objects.close();
    }
  });

  it("reads back the commits, trees and blobs it wrote without asking git", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    const objects = new RepoObjects("site", repo, false);
    try {
      const blob = await objects.writeObject("blob", Buffer.from("x\n"));
      // Removed behind its back: only the in-process copy can answer now.
      rmSync(join(repo, ".git", "objects", blob.slice(0, 2), blob.slice(2)));
      expect((await objects.blob(blob))?.toString()).toBe("x\n");
      const head = git(repo, "rev-parse", "HEAD");
      expect((await objects.commit(head))?.tree).toBe(git(repo, "rev-parse", "HEAD^{tree}"));
    } finally {
      objects.close();
    }
  });
});

describe("git effects on a repository whose refs were packed (git gc)", () => {
  let sb: Sandbox;
  let fx: Effects | undefined;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });

  it("probes applied keys present and new keys absent, and keeps applying once", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    fx = createEffects(sb.config, { clock: clock() });
    for (const k of ["j1/0", "j2/0"]) {
      const s = commitSpec(`${k.slice(0, 2)}.txt`, `${k}\n`);
      await fx.apply(s, k, { probed: await fx.probe(s, k) });
    }
    git(repo, "pack-refs", "--all", "--prune");
    expect(git(repo, "for-each-ref", "--count=1", "refs/idem/")).not.toBe("");
    const again = commitSpec("j1.txt", "j1/0\n");
    expect((await fx.probe(again, "j1/0")).status).toBe("present");
    const s3 = commitSpec("j3.txt", "j3/0\n");
    const p3 = await fx.probe(s3, "j3/0");
    expect(p3.status).toBe("absent");
    await fx.apply(s3, "j3/0", { probed: p3 });
    await fx.close();
    // A fresh process (no cache) sees the same: one commit per key.
    fx = createEffects(sb.config, { clock: clock() });
    for (const k of ["j1/0", "j2/0", "j3/0"]) {
      const s = commitSpec(`${k.slice(0, 2)}.txt`, `${k}\n`);
      expect((await fx.probe(s, k)).status).toBe("present");
    }
    expect(git(repo, "rev-list", "--count", "main")).toBe("4");
  });
});
