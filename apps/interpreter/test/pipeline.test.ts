// The interpreter's pipeline on a remote git branch (a bare repository over file://): the runs of
// one branch are claimed, probed and queued while the earlier ones' pushes are out, and still land
// in recording order, each once, also when a push fails under them.
import { execFileSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openEffects } from "@idem/core";
import type { GitCommitSpec } from "@idem/effects";
import { JOURNAL_EVENTS } from "@idem/journal";
import type { AgentOutput } from "@idem/schema";
import { createBareRepo, tempDir } from "@idem/testing";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  git,
  openWorkspaceJournal,
  recordAll,
  type Workspace,
} from "../../../test/chaos/interpreter-fixture.js";
import { createRemoteWorkspace } from "../../../test/chaos/remote-fixture.js";
import { createInterpreter } from "../src/index.js";

const silent = pino({ level: "silent" });
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A workspace whose repo `site` is a bare repository reached over file://, which logs every push. */
async function remoteWorkspace(): Promise<{ ws: Workspace; bare: string }> {
  const dir = await tempDir("idem-pipeline-");
  const bare = join(dir.path, "site.git");
  const docs = join(dir.path, "docs.git");
  createBareRepo(bare);
  createBareRepo(docs);
  await git(bare, "config", "core.logAllRefUpdates", "always");
  const ws = createRemoteWorkspace(
    join(dir.path, "ws"),
    { site: { url: `file://${bare}`, path: bare }, docs: { url: `file://${docs}`, path: docs } },
    // No lease expires in a passing run, however slow the machine.
    { interpreter: { leaseMs: 120_000 } },
  );
  cleanup.push(() => dir.remove());
  return { ws, bare };
}

const commitOutput = (i: number): AgentOutput => ({
  jobId: `p-${String(i).padStart(3, "0")}`,
  agent: "writer",
  effects: [
    {
      kind: "git.commit",
      repo: "site",
      message: `commit ${i}`,
      files: [{ path: `c/${i}.txt`, content: `${i}\n` }],
    },
  ],
});

async function drain(ws: Workspace, outputs: AgentOutput[]) {
  const journal = await openWorkspaceJournal(ws);
  const effects = openEffects(ws.config);
  cleanup.push(async () => {
    await effects.close();
    await journal.close();
  });
  await recordAll(journal, ws.config, outputs);
  const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
  return { result: await interp.drain(), journal };
}

/** The Idem-Effect keys on main of the bare repository, oldest first. */
async function keysOnMain(bare: string): Promise<string[]> {
  const log = await git(bare, "log", "--reverse", "--format=%B%x00", "main");
  return [...log.matchAll(/^Idem-Effect: (.+)$/gm)].map((m) => (m[1] as string).trim());
}

/** Commits carrying `keys` on main of the bare repository, as an earlier attempt would have left them. */
async function pushWithKeys(bare: string, keys: string[]): Promise<void> {
  for (const key of keys) {
    const head = (await git(bare, "rev-parse", "main")).trim();
    const tree = (await git(bare, "rev-parse", `${head}^{tree}`)).trim();
    const commit = execFileSync("git", ["commit-tree", tree, "-p", head], {
      cwd: bare,
      input: `earlier attempt\n\nIdem-Effect: ${key}\n`,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "idem",
        GIT_AUTHOR_EMAIL: "i@x",
        GIT_COMMITTER_NAME: "idem",
        GIT_COMMITTER_EMAIL: "i@x",
      },
    })
      .toString()
      .trim();
    await git(bare, "update-ref", "refs/heads/main", commit, head);
  }
}

/** Pushes that moved main (the bare repository's reflog). */
async function pushes(bare: string): Promise<number> {
  return (await git(bare, "reflog", "show", "--format=%H", "refs/heads/main")).trim().split("\n")
    .length;
}

describe("the interpreter's pipeline on a remote branch", () => {
  it("lands the runs of one branch in recording order, each once, in far fewer pushes than runs", async () => {
    const { ws, bare } = await remoteWorkspace();
    const outputs = Array.from({ length: 40 }, (_, i) => commitOutput(i));
    const { result } = await drain(ws, outputs);
    expect(result.runs.done).toBe(40);
    expect(await keysOnMain(bare)).toEqual(outputs.map((o) => `${o.jobId}/0`));
    // One run at a time would push 40 times.
    expect(await pushes(bare)).toBeLessThanOrEqual(20);
  });

  it("makes a run whose first effect on the branch is already there wait its turn before its next one", async () => {
    const { ws, bare } = await remoteWorkspace();
    const outputs = Array.from({ length: 24 }, (_, i) => commitOutput(i));
    // Every third output has two commits, the first already pushed by an earlier attempt.
    const early: string[] = [];
    for (const [i, o] of outputs.entries()) {
      if (i % 3 !== 2) continue;
      const second = { ...(o.effects[0] as GitCommitSpec), message: `second ${i}` };
      second.files = [{ path: `d/${i}.txt`, content: "second\n" }];
      o.effects.push(second);
      early.push(`${o.jobId}/0`);
    }
    await pushWithKeys(bare, early);
    const { result } = await drain(ws, outputs);
    expect(result.runs.done).toBe(outputs.length);
    const expected = outputs.flatMap((o, i) => (i % 3 === 2 ? [`${o.jobId}/1`] : [`${o.jobId}/0`]));
    expect(await keysOnMain(bare)).toEqual([...early, ...expected]);
  });

  it("keeps recording order when a push fails under queued runs: none of theirs lands before the failed ones", async () => {
    const { ws, bare } = await remoteWorkspace();
    // The first push dies with its receive-pack (the client sees the remote hang up: UNAVAILABLE).
    const hook = join(bare, "hooks", "pre-receive");
    writeFileSync(
      hook,
      '#!/bin/sh\nif [ ! -e failed-once ]; then : > failed-once; kill -9 "$PPID"; sleep 5; fi\nexit 0\n',
    );
    chmodSync(hook, 0o755);
    const outputs = Array.from({ length: 30 }, (_, i) => commitOutput(i));
    const { result, journal } = await drain(ws, outputs);
    expect(result.runs.done).toBe(30);
    expect(result.endedDead).toBe(false);
    expect(await keysOnMain(bare)).toEqual(outputs.map((o) => `${o.jobId}/0`));
    // The failure reached the runs: the pushed-with ones failed and were tried again.
    const failed = await journal.events.list({ type: JOURNAL_EVENTS.RUN_FAILED });
    expect(failed.length).toBeGreaterThanOrEqual(1);
  });
});
