import { execFileSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { GitCommitSpec } from "@idem/effects";
import type { FaultPoint } from "@idem/schema";
import { configSection, createBareRepo, type GitDaemonHandle, startGitDaemon } from "@idem/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ApplyTicket, createEffects, type Effects } from "../src/index.js";
import { clock, commitsWithKey, git, type Sandbox, sandbox } from "./helpers.js";

const spec = (path: string, content: string): GitCommitSpec => ({
  kind: "git.commit",
  repo: "site",
  message: `agent: ${path}`,
  files: [{ path, content }],
});

/** Registers `url` as the remote repo `site`, its mirror in the sandbox (as parseConfig would). */
function addRemote(sb: Sandbox, url: string, mirror = "mirror.git"): string {
  const cacheDir = join(sb.dir, mirror);
  configSection(sb.config, "repos").site = {
    url,
    cacheDir,
    branch: "main",
    branches: [],
    author: { name: "idem", email: "idem@localhost" },
  };
  return cacheDir;
}

/** A third party's commit pushed straight to the bare repository, as another tool would. */
function thirdPartyCommit(bare: string, name: string): string {
  const run = (args: string[], input?: string) =>
    execFileSync("git", args, {
      cwd: bare,
      input,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "T",
        GIT_AUTHOR_EMAIL: "t@x",
        GIT_COMMITTER_NAME: "T",
        GIT_COMMITTER_EMAIL: "t@x",
      },
    })
      .toString()
      .trim();
  const head = run(["rev-parse", "refs/heads/main"]);
  const blob = run(["hash-object", "-w", "--stdin"], `${name}\n`);
  const base = run(["rev-parse", `${head}^{tree}`]);
  const entries = run(["ls-tree", base]);
  const tree = run(["mktree"], `${entries}\n100644 blob ${blob}\t${name}\n`);
  const commit = run(["commit-tree", tree, "-p", head, "-m", `third party: ${name}`]);
  run(["update-ref", "refs/heads/main", commit, head]);
  return commit;
}

describe("git effects on a remote (file://)", () => {
  let sb: Sandbox;
  let fx: Effects | undefined;
  let bare: string;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
    sb?.cleanup();
  });
  function setup(fault?: (p: FaultPoint) => void): Effects {
    sb = sandbox();
    bare = join(sb.dir, "remote.git");
    createBareRepo(bare);
    addRemote(sb, `file://${bare}`);
    fx = createEffects(sb.config, { clock: clock(), ...(fault ? { fault } : {}) });
    return fx;
  }

  it("makes the mirror on first use, pushes the commit and finds it present afterwards", async () => {
    const e = setup();
    const s = spec("docs/a.md", "A\n");
    const probed = await e.probe(s, "j1/0");
    expect(probed.status).toBe("absent");
    const detail = await e.apply(s, "j1/0", { probed: probed });
    expect(commitsWithKey(bare, "j1/0")).toEqual([detail.commit]);
    expect(git(bare, "show", "main:docs/a.md")).toBe("A");
    expect(await e.probe(s, "j1/0")).toEqual({
      status: "present",
      detail: { commit: detail.commit },
    });
  });

  it("pushes effects applied at once together, each commit once, in the order they were applied", async () => {
    const e = setup();
    const keys = Array.from({ length: 12 }, (_, i) => `j${i}/0`);
    const probes = await Promise.all(keys.map((k) => e.probe(spec(`f/${k}`, k), k)));
    await Promise.all(keys.map((k, i) => e.apply(spec(`f/${k}`, k), k, { probed: probes[i] })));
    for (const k of keys) expect(commitsWithKey(bare, k)).toHaveLength(1);
    const order = git(bare, "log", "--reverse", "--format=%s", "main").split("\n").slice(1);
    expect(order).toEqual(keys.map((k) => `agent: f/${k}`));
  });

  it("builds again on a tip a third party moved after the probe, keeping the third party's commit", async () => {
    const e = setup();
    const s = spec("docs/b.md", "B\n");
    const probed = await e.probe(s, "j2/0");
    const theirs = thirdPartyCommit(bare, "theirs.txt");
    const detail = await e.apply(s, "j2/0", { probed: probed });
    expect(detail.base).toBe(theirs);
    expect(git(bare, "merge-base", "--is-ancestor", theirs, "main")).toBe("");
    expect(commitsWithKey(bare, "j2/0")).toHaveLength(1);
  });

  it("fetches only when the remote's tip is a commit the mirror lacks", async () => {
    const e = setup();
    const s = spec("docs/f.md", "F\n");
    await e.apply(s, "j7/0", { probed: await e.probe(s, "j7/0") });
    const mirror = join(sb.dir, "mirror.git");
    const fetched = () => git(mirror, "for-each-ref", "--format=%(refname)", "refs/idem/fetched/");
    await e.probe(spec("docs/g.md", "G\n"), "j8/0");
    expect(fetched()).toBe("");
    const theirs = thirdPartyCommit(bare, "moved.txt");
    const probed = await e.probe(spec("docs/g.md", "G\n"), "j8/0");
    expect(probed).toEqual({ status: "absent", detail: { base: theirs } });
    expect(fetched()).toBe("refs/idem/fetched/main");
  });

  it("sends a patch that no longer applies on the moved remote back to the probe, which finds the conflict", async () => {
    const e = setup();
    const patch = [
      "diff --git a/README b/README",
      "--- a/README",
      "+++ b/README",
      "@@ -1 +1 @@",
      "-seed",
      "+ours",
      "",
    ].join("\n");
    const p = { kind: "git.patch" as const, repo: "site", message: "agent: patch", patch };
    const probed = await e.probe(p, "j9/0");
    expect(probed.status).toBe("absent");
    // A third party rewrites the line the patch changes.
    const head = git(bare, "rev-parse", "main");
    const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], {
      cwd: bare,
      input: "theirs\n",
    })
      .toString()
      .trim();
    const tree = execFileSync("git", ["mktree"], {
      cwd: bare,
      input: `100644 blob ${blob}\tREADME\n`,
    })
      .toString()
      .trim();
    const commit = git(bare, "commit-tree", tree, "-p", head, "-m", "theirs");
    git(bare, "update-ref", "refs/heads/main", commit, head);
    const err = await e.apply(p, "j9/0", { probed: probed }).catch((x: { code?: string }) => x);
    expect((err as { code?: string }).code).toBe("TARGET_MOVED");
    expect((await e.probe(p, "j9/0")).status).toBe("conflict");
    expect(git(bare, "rev-parse", "main")).toBe(commit);
  });

  it("pushes an apply that follows another run's only after it, and refuses it (ORDER_BLOCKED, nothing pushed) when that one failed", async () => {
    const e = setup();
    const patch =
      "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-seed\n+ours\n";
    const p = { kind: "git.patch" as const, repo: "site", message: "agent: patch", patch };
    const probedPatch = await e.probe(p, "k1/0");
    // A third party rewrites the line the patch changes: the patch's push fails (TARGET_MOVED).
    const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: bare, input: "x\n" });
    const tree = execFileSync("git", ["mktree"], {
      cwd: bare,
      input: `100644 blob ${blob.toString().trim()}\tREADME\n`,
    });
    const head = git(bare, "rev-parse", "main");
    const theirs = git(bare, "commit-tree", tree.toString().trim(), "-p", head, "-m", "theirs");
    git(bare, "update-ref", "refs/heads/main", theirs, head);
    const follow = async (first: Promise<unknown>, ticket: Promise<ApplyTicket>, key: string) => {
      const s = spec(`f/${key}`, key);
      const second = e.apply(s, key, {
        probed: await e.probe(s, key),
        order: { after: await ticket },
      });
      return Promise.allSettled([first, second]);
    };
    let queued!: (t: ApplyTicket) => void;
    let ticket = new Promise<ApplyTicket>((r) => {
      queued = r;
    });
    const [patched, blocked] = await follow(
      e.apply(p, "k1/0", { probed: probedPatch, order: { queued } }),
      ticket,
      "k2/0",
    );
    expect(patched.status === "rejected" && patched.reason.code).toBe("TARGET_MOVED");
    expect(blocked.status === "rejected" && blocked.reason.code).toBe("ORDER_BLOCKED");
    expect(commitsWithKey(bare, "k2/0")).toEqual([]);
    expect(git(bare, "rev-parse", "main")).toBe(theirs);
    // Behind one that is pushed, it lands after it.
    ticket = new Promise<ApplyTicket>((r) => {
      queued = r;
    });
    const s3 = spec("f/k3", "k3");
    const [first, second] = await follow(
      e.apply(s3, "k3/0", { probed: await e.probe(s3, "k3/0"), order: { queued } }),
      ticket,
      "k4/0",
    );
    expect([first.status, second.status]).toEqual(["fulfilled", "fulfilled"]);
    expect(git(bare, "log", "-2", "--format=%s", "main").split("\n")).toEqual([
      "agent: f/k4/0",
      "agent: f/k3",
    ]);
  });

  it("fails as a conflict, without a retry, when the server refuses the push itself", async () => {
    const e = setup();
    const hook = join(bare, "hooks", "pre-receive");
    writeFileSync(hook, "#!/bin/sh\necho 'main is protected' >&2\nexit 1\n");
    chmodSync(hook, 0o755);
    const s = spec("docs/x.md", "X\n");
    const err = await e
      .apply(s, "j10/0", { probed: await e.probe(s, "j10/0") })
      .catch((x: unknown) => x);
    expect((err as { code?: string }).code).toBe("TARGET_CONFLICT");
    expect(commitsWithKey(bare, "j10/0")).toEqual([]);
  });

  it("answers present after a kill right after the push (a fresh process probes the remote)", async () => {
    const e = setup((p) => {
      if (p === "interpreter.after-push") throw new Error("killed after the push");
    });
    const s = spec("docs/c.md", "C\n");
    await expect(e.apply(s, "j3/0", { probed: await e.probe(s, "j3/0") })).rejects.toThrow(
      /killed/,
    );
    await e.close();
    fx = createEffects(sb.config, { clock: clock() });
    const again = await fx.probe(s, "j3/0");
    expect(again.status).toBe("present");
    expect(commitsWithKey(bare, "j3/0")).toHaveLength(1);
  });

  it("drops a commit the mirror holds but the remote never got, and applies the effect once", async () => {
    const e = setup();
    const s = spec("docs/d.md", "D\n");
    await e.probe(s, "j0/0");
    // What a kill between the commit in the mirror and the push leaves: the mirror ahead of the remote.
    const mirror = join(sb.dir, "mirror.git");
    const tree = git(mirror, "rev-parse", "main^{tree}");
    const orphan = git(mirror, "commit-tree", tree, "-p", "main", "-m", "x\n\nIdem-Effect: j4/0");
    git(mirror, "update-ref", "refs/heads/main", orphan);
    const probed = await e.probe(s, "j4/0");
    expect(probed.status).toBe("absent");
    await e.apply(s, "j4/0", { probed: probed });
    expect(commitsWithKey(bare, "j4/0")).toHaveLength(1);
    expect(git(mirror, "rev-parse", "main")).toBe(git(bare, "rev-parse", "main"));
  });

  it("probes again after the remote was force-pushed below what the mirror knew", async () => {
    const e = setup();
    const s = spec("docs/e.md", "E\n");
    await e.apply(s, "j5/0", { probed: await e.probe(s, "j5/0") });
    git(bare, "update-ref", "refs/heads/main", git(bare, "rev-parse", "main~1"));
    const probed = await e.probe(s, "j5/0");
    expect(probed.status).toBe("absent");
    await e.apply(s, "j5/0", { probed: probed });
    expect(commitsWithKey(bare, "j5/0")).toHaveLength(1);
  });

  it("never prints a credential of the remote's URL in an error", async () => {
    sb = sandbox();
    // A password is refused with the config (git-config tests); a token as the user name is not.
    addRemote(sb, "http://s3cret@127.0.0.1:9/nowhere.git");
    fx = createEffects(sb.config, { clock: clock() });
    const err = await fx.probe(spec("a", "a"), "j6/0").catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code?: string }).code).toBe("UNAVAILABLE");
    expect(`${(err as Error).message} ${JSON.stringify(err)}`).not.toContain("s3cret");
  });
});

describe("git effects on a remote served by git daemon (git://)", () => {
  let daemon: GitDaemonHandle;
  let sb: Sandbox;
  let fx: Effects | undefined;
  beforeAll(async () => {
    daemon = await startGitDaemon();
  });
  afterAll(async () => {
    await daemon?.stop();
  });
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
    sb?.cleanup();
  });

  it("applies, probes present, and a second mirror on another host sees the same commit", async () => {
    const { path: bare, url } = daemon.createRepo("site");
    sb = sandbox();
    addRemote(sb, url);
    fx = createEffects(sb.config, { clock: clock() });
    const s = spec("docs/g.md", "G\n");
    const detail = await fx.apply(s, "g1/0", { probed: await fx.probe(s, "g1/0") });
    expect(commitsWithKey(bare, "g1/0")).toEqual([detail.commit]);
    const site = configSection<Record<string, object>>(sb.config, "repos").site;
    if (!site) throw new Error("no repo");
    const m2 = join(sb.dir, "m2.git");
    const other = createEffects(
      { ...sb.config, sections: { repos: { site: { ...site, cacheDir: m2 } } } },
      { clock: clock() },
    );
    try {
      expect(await other.probe(s, "g1/0")).toEqual({
        status: "present",
        detail: { commit: detail.commit },
      });
      // The second host's apply of the same key writes nothing.
      expect(await other.apply(s, "g1/0")).toEqual({ commit: detail.commit });
    } finally {
      await other.close();
    }
    expect(commitsWithKey(bare, "g1/0")).toHaveLength(1);
  });

  it("audits the remote branch after one fetch", async () => {
    const { path: bare, url } = daemon.createRepo("audited");
    sb = sandbox();
    addRemote(sb, url);
    fx = createEffects(sb.config, { clock: clock() });
    const s = spec("docs/h.md", "H\n");
    await fx.apply(s, "h1/0", { probed: await fx.probe(s, "h1/0") });
    thirdPartyCommit(bare, "later.txt");
    const keys = (await fx.scan(s)) ?? new Map();
    expect([...keys.keys()]).toEqual(["h1/0"]);
  });
});
