// Issue 42, item 8: an interpreter that lost its leases in the middle of a chain of dependent
// patches (each applies only on top of the one before) ended a following git.patch dead as a
// conflict ("patch does not apply") instead of leaving it to the next holder. Here the leases of
// every run the interpreter holds are taken from it at a fault point of the chain's first run (as
// a holder stalled past its lease sees it: another holder has them), then given up by the thief,
// so the interpreter takes them over again: every patch applies once, in order, and no run dies.
// The cause was the pipeline's order between held runs: a lost claim of a run that ended after the
// run was claimed again blocked or removed the new claim's place, and a follower went ahead of it.
import { join } from "node:path";
import { openEffects } from "@idem/core";
import { createInterpreter } from "@idem/interpreter";
import { FAULT_POINTS, type FaultPoint } from "@idem/schema";
import { createBareRepo, tempDir } from "@idem/testing";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  chainOutputs,
  createWorkspace,
  git,
  openWorkspaceJournal,
  recordAll,
  trailerCounts,
  type Workspace,
} from "../../../test/chaos/interpreter-fixture.js";
import { createRemoteWorkspace } from "../../../test/chaos/remote-fixture.js";

const silent = pino({ level: "silent" });
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const OWNER = "chain-holder";
const CHAIN = 6;

/** Takes every lease OWNER holds, as another holder would; lets them expire at once. */
function stealLeases(journalPath: string): void {
  const db = new Database(journalPath, { timeout: 10_000 });
  try {
    db.prepare(
      `UPDATE runs SET lease_owner = 'thief', lease_token = 'stolen', lease_until = 0, due_at = 0
       WHERE state = 'running' AND lease_owner = ?`,
    ).run(OWNER);
  } finally {
    db.close();
  }
}

async function drainWithStolenLeases(ws: Workspace, point: FaultPoint, nth: number) {
  const journal = await openWorkspaceJournal(ws);
  const effects = openEffects(ws.config);
  cleanup.push(async () => {
    await effects.close();
    await journal.close();
  });
  const outputs = chainOutputs("chain", CHAIN);
  await recordAll(journal, ws.config, outputs);
  let seen = 0;
  const interp = createInterpreter({
    config: ws.config,
    journal,
    effects,
    logger: silent,
    owner: OWNER,
    fault: (p) => {
      if (p === point && ++seen === nth) stealLeases(ws.config.journal.path);
    },
  });
  const result = await interp.drain();
  return { result, journal, outputs };
}

async function localWorkspace(): Promise<Workspace> {
  const dir = await tempDir("idem-lease-chain-");
  cleanup.push(() => dir.remove());
  return createWorkspace(dir.path, { leaseMs: 120_000, pipeline: 8 });
}

async function remoteWorkspace(): Promise<Workspace> {
  const dir = await tempDir("idem-lease-chain-remote-");
  cleanup.push(() => dir.remove());
  const site = join(dir.path, "site.git");
  const docs = join(dir.path, "docs.git");
  createBareRepo(site);
  createBareRepo(docs);
  return createRemoteWorkspace(
    join(dir.path, "ws"),
    { site: { url: `file://${site}`, path: site }, docs: { url: `file://${docs}`, path: docs } },
    { interpreter: { leaseMs: 120_000, pipeline: 8 } },
  );
}

const POINTS: [FaultPoint, number][] = [
  [FAULT_POINTS.INTERPRETER_AFTER_CLAIM, 2],
  [FAULT_POINTS.INTERPRETER_AFTER_INTENT, 1],
  [FAULT_POINTS.INTERPRETER_AFTER_INTENT, 2],
  [FAULT_POINTS.INTERPRETER_AFTER_APPLY, 1],
  [FAULT_POINTS.INTERPRETER_AFTER_EFFECT_RECORD, 1],
  [FAULT_POINTS.INTERPRETER_BEFORE_DONE, 1],
];

// On a remote branch (applies queued behind each other) every point; a local repository at two.
describe.each([
  ["a local repository", localWorkspace, POINTS.filter(([p]) => p.endsWith("intent"))],
  ["a remote branch", remoteWorkspace, POINTS],
] as const)("a chain of patches on %s whose holder lost its leases", (_name, make, points) => {
  it.each(points)(
    "at %s (#%i): leaves the followers to the next holder, each patch once",
    async (point, nth) => {
      const ws = await make();
      const { result, journal, outputs } = await drainWithStolenLeases(ws, point, nth);
      const dead = [];
      for (const o of outputs) {
        const run = await journal.runs.latest(o.jobId);
        if (run?.state !== "done") dead.push(`${o.jobId}: ${run?.state} ${run?.lastError}`);
      }
      expect(dead, JSON.stringify(result.runs)).toEqual([]);
      const keys = await trailerCounts(ws.repoPath);
      expect(outputs.map((o) => keys.get(`${o.jobId}/0`))).toEqual(outputs.map(() => 1));
      const lines = (await git(ws.repoPath, "show", "main:chain.txt")).trim().split("\n");
      expect(lines).toEqual(outputs.map((_, i) => `chain line ${i}`));
    },
  );
});
