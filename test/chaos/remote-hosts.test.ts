// Several hosts on one remote: two interpreters in two working directories (two mirrors) on one
// journal pushing to one repository served by git daemon, and a third party pushing its own commits
// to the branch during a run. Every key once on its branch, recording order kept per branch, and
// nothing the third party pushed lost. IDEM_REMOTE_OUTPUTS sets the size of the two-host run.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { AgentOutput } from "@idem/schema";
import { type GitDaemonHandle, startGitDaemon, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  git,
  openWorkspaceJournal,
  REPO_ROOT,
  recordAll,
  sleep,
  startChild,
} from "./interpreter-fixture.js";
import { createRemoteWorkspace } from "./remote-fixture.js";

const OUTPUTS = Number(process.env.IDEM_REMOTE_OUTPUTS ?? 200);

let daemon: GitDaemonHandle;
beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/interpreter"], { cwd: REPO_ROOT, stdio: "ignore" });
  daemon = await startGitDaemon();
});
afterAll(async () => {
  await daemon?.stop();
});

/** One git.commit per output, on `branch`. */
function commitOutput(jobId: string, branch: string): AgentOutput {
  return {
    jobId,
    agent: "writer",
    effects: [
      {
        kind: "git.commit",
        repo: "site",
        ...(branch === "main" ? {} : { branch }),
        message: `commit of ${jobId}`,
        files: [{ path: `c/${jobId}.txt`, content: `${jobId}\n` }],
      },
    ],
  };
}

/** The Idem-Effect keys on `branch` of the bare repository, oldest first. */
async function keysOnBranch(bare: string, branch: string): Promise<string[]> {
  const log = await git(bare, "log", "--reverse", "--format=%B%x00", branch);
  return [...log.matchAll(/^Idem-Effect: (.+)$/gm)].map((m) => (m[1] as string).trim());
}

/** A third party's commit on `main` of the bare repository, by compare-and-swap; retried if it moved. */
function thirdPartyPush(bare: string, name: string): string {
  const run = (args: string[], input?: string) =>
    execFileSync("git", args, {
      cwd: bare,
      input,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "Third",
        GIT_AUTHOR_EMAIL: "third@x",
        GIT_COMMITTER_NAME: "Third",
        GIT_COMMITTER_EMAIL: "third@x",
      },
    })
      .toString()
      .trim();
  for (;;) {
    const head = run(["rev-parse", "refs/heads/main"]);
    const blob = run(["hash-object", "-w", "--stdin"], `${name}\n`);
    const entries = run(["ls-tree", head]);
    const tree = run(["mktree"], `${entries}\n100644 blob ${blob}\tthird-${name}.txt\n`);
    const commit = run(["commit-tree", tree, "-p", head, "-m", `third party ${name}`]);
    try {
      run(["update-ref", "refs/heads/main", commit, head]);
      return commit;
    } catch {
      // idem pushed meanwhile: build again on the new tip, as a person would after a rejected push.
    }
  }
}

describe("remote git targets from several hosts", () => {
  it(`two interpreters with two mirrors apply ${OUTPUTS} outputs on one remote, each key once, in recording order per branch`, async () => {
    await using dir = await tempDir("idem-remote-hosts-");
    const site = daemon.createRepo("hosts-site");
    const branches = ["main", ...Array.from({ length: 7 }, (_, i) => `b${i + 1}`)];
    for (const b of branches.slice(1))
      await git(site.path, "update-ref", `refs/heads/${b}`, "refs/heads/main");
    const docs = daemon.createRepo("hosts-docs");
    // Each host holds 4 branches at a time, with up to 3 runs following each (pipeline 4): the other
    // host takes the other branches, so both make and use a mirror.
    const interpreter = { leaseMs: 5000, maxAttempts: 50, pipeline: 4 };
    const one = createRemoteWorkspace(
      join(dir.path, "one"),
      { site, docs },
      {
        interpreter,
        siteBranches: branches.slice(1),
      },
    );
    const two = createRemoteWorkspace(
      join(dir.path, "two"),
      { site, docs },
      {
        interpreter,
        siteBranches: branches.slice(1),
        journalPath: one.config.journal.path,
      },
    );
    const outputs = Array.from({ length: OUTPUTS }, (_, i) =>
      commitOutput(`h-${String(i).padStart(4, "0")}`, branches[i % branches.length] as string),
    );
    const journal = await openWorkspaceJournal(one);
    try {
      await recordAll(journal, one.config, outputs);
      const args = ["--concurrency", "4"];
      const [a, b] = await Promise.all([
        startChild(one, { args }).done,
        startChild(two, { args }).done,
      ]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      for (const [i, branch] of branches.entries()) {
        const expected = outputs
          .filter((_, j) => j % branches.length === i)
          .map((o) => `${o.jobId}/0`);
        expect(await keysOnBranch(site.path, branch)).toEqual(expected);
      }
      for (const o of outputs) {
        expect((await journal.runs.latest(o.jobId))?.state).toBe("done");
        const [row] = await journal.ledger.forJob(o.jobId);
        expect(["applied", "present"]).toContain(row?.state);
      }
      // Both hosts made their own mirror.
      for (const ws of [one, two]) {
        const mirror = join(ws.dir, ".idem/mirrors/site.git");
        expect(await git(mirror, "rev-parse", "--is-bare-repository")).toBe("true\n");
      }
    } finally {
      await journal.close();
    }
  });

  it("a third party pushing to the branch every few effects loses nothing, and idem's commits are all there once", async () => {
    await using dir = await tempDir("idem-remote-third-");
    const site = daemon.createRepo("third-site");
    const docs = daemon.createRepo("third-docs");
    const ws = createRemoteWorkspace(
      dir.path,
      { site, docs },
      // Two runs in flight per loop: pushes small enough for the third party to come between them.
      { interpreter: { maxAttempts: 50, pipeline: 2 } },
    );
    const outputs = Array.from({ length: 24 }, (_, i) =>
      commitOutput(`t-${String(i).padStart(3, "0")}`, "main"),
    );
    const journal = await openWorkspaceJournal(ws);
    try {
      await recordAll(journal, ws.config, outputs);
      const run = startChild(ws, { args: ["--concurrency", "2"] });
      let finished = false;
      void run.done.then(() => {
        finished = true;
      });
      const theirs: string[] = [];
      let seen = 0;
      while (!finished) {
        const idem = (await keysOnBranch(site.path, "main")).length;
        if (idem >= seen + 3 && idem < outputs.length) {
          seen = idem;
          theirs.push(thirdPartyPush(site.path, String(theirs.length)));
        }
        await sleep(20);
      }
      const result = await run.done;
      expect(result.code, result.stderr).toBe(0);
      expect(theirs.length).toBeGreaterThanOrEqual(3);
      for (const c of theirs) await git(site.path, "merge-base", "--is-ancestor", c, "main");
      expect(await keysOnBranch(site.path, "main")).toEqual(outputs.map((o) => `${o.jobId}/0`));
      for (const o of outputs) expect((await journal.runs.latest(o.jobId))?.state).toBe("done");
    } finally {
      await journal.close();
    }
  });
});
