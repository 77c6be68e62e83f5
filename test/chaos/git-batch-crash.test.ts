// A local branch's group commit under SIGKILL: a real `idem interpreter --once` (the built CLI)
// killed at interpreter.after-branch-move, once one ref transaction moved the branch over a batch
// of the pipeline's commits and before the working tree followed or any of them was recorded; then
// a fresh `idem interpreter --once` finishes. Every effect is on the branch exactly once, the
// ledger agrees, and the working tree and index match the branch with no pending marker left.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { AgentOutput } from "@idem/schema";
import { FAULT_POINTS } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import {
  buildForTest,
  CLEAN,
  chainOutputs,
  createWorkspace,
  git,
  IDEM_BIN,
  openWorkspaceJournal,
  recordAll,
  verify,
} from "./interpreter-fixture.js";

const run = promisify(execFile);

beforeAll(() => {
  buildForTest("apps/cli");
});

/** `idem interpreter --once` on the workspace's config; its exit code, signal and stderr. */
async function interpreterOnce(
  configFile: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  try {
    const r = await run(
      process.execPath,
      [IDEM_BIN, "interpreter", "--once", "--config", configFile],
      {
        env: { ...process.env, IDEM_LOG_LEVEL: "warn", ...env },
        timeout: 180_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return { code: 0, signal: null, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: number | null; signal?: string | null; stderr?: string };
    return { code: err.code ?? null, signal: err.signal ?? null, stderr: err.stderr ?? "" };
  }
}

/** `n` outputs of one git.commit each on site, every one a file of its own. */
function commitOutputs(n: number): AgentOutput[] {
  return Array.from({ length: n }, (_, i) => {
    const jobId = `commit-${String(i).padStart(3, "0")}`;
    return {
      jobId,
      agent: "writer",
      effects: [
        {
          kind: "git.commit",
          repo: "site",
          message: `commit ${i}`,
          files: [{ path: `c/${jobId}.txt`, content: `commit ${jobId}\n` }],
        },
      ],
    };
  });
}

describe("a local branch's group commit under SIGKILL", () => {
  it.concurrent.each([1, 2, 4])(
    "finishes every effect exactly once after a SIGKILL at interpreter.after-branch-move:%i",
    async (n) => {
      await using dir = await tempDir("idem-batch-crash-");
      const ws = await createWorkspace(dir.path, { leaseMs: 60_000 });
      // Commits of files of their own, then patches that each need the one before on chain.txt.
      const outputs = [...commitOutputs(24), ...chainOutputs("chain", 4)];
      const journal = await openWorkspaceJournal(ws);
      try {
        await recordAll(journal, ws.config, outputs);
        const killed = await interpreterOnce(ws.configFile, {
          IDEM_FAULT: `${FAULT_POINTS.INTERPRETER_AFTER_BRANCH_MOVE}:${n}`,
        });
        expect(killed.signal, killed.stderr).toBe("SIGKILL");
        // Killed with the branch moved and its working tree not: the marker names the batch.
        const marker = JSON.parse(
          readFileSync(join(ws.repoPath, ".git/idem/pending.json"), "utf8"),
        ) as { base: string; commit: string };
        expect(await git(ws.repoPath, "rev-parse", "main")).toBe(`${marker.commit}\n`);
        const fresh = await interpreterOnce(ws.configFile);
        expect(fresh.code, fresh.stderr).toBe(0);
        expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
        // The killed batch's working tree was finished, nothing left half done.
        expect(existsSync(join(ws.repoPath, ".git/idem/pending.json"))).toBe(false);
        expect(existsSync(join(ws.repoPath, ".git/index.lock"))).toBe(false);
        expect(await git(ws.repoPath, "status", "--porcelain")).toBe("");
        for (const o of outputs.slice(0, 24)) {
          const f = `c/${o.jobId}.txt`;
          expect(readFileSync(join(ws.repoPath, f), "utf8")).toBe(`commit ${o.jobId}\n`);
        }
        expect(readFileSync(join(ws.repoPath, "chain.txt"), "utf8")).toBe(
          `${[0, 1, 2, 3].map((i) => `chain line ${i}`).join("\n")}\n`,
        );
        expect(await git(ws.repoPath, "fsck", "--strict", "--no-dangling")).toBe("");
        expect(await journal.maintenance.integrity()).toEqual([]);
      } finally {
        await journal.close();
      }
    },
  );
});
