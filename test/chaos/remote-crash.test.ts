// Crash drills with git targets on a server: a real interpreter process SIGKILLed at each fault
// point (interpreter.after-push included), then a fresh one finishes. `site` is served by git daemon
// (git://), `docs` is a file:// bare repository; every key must be on its remote branch exactly once
// and the ledger must agree.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { FAULT_POINTS } from "@idem/schema";
import { createBareRepo, type GitDaemonHandle, startGitDaemon, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLEAN,
  chainOutputs,
  mixedOutput,
  openWorkspaceJournal,
  REPO_ROOT,
  recordAll,
  startChild,
  verify,
} from "./interpreter-fixture.js";
import { createRemoteWorkspace } from "./remote-fixture.js";

let daemon: GitDaemonHandle;
beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/interpreter"], { cwd: REPO_ROOT, stdio: "ignore" });
  daemon = await startGitDaemon();
});
afterAll(async () => {
  await daemon?.stop();
});

const POINTS = [
  [FAULT_POINTS.INTERPRETER_AFTER_CLAIM, 1],
  [FAULT_POINTS.INTERPRETER_AFTER_INTENT, 2],
  [FAULT_POINTS.INTERPRETER_AFTER_PUSH, 1],
  [FAULT_POINTS.INTERPRETER_AFTER_PUSH, 4],
  [FAULT_POINTS.INTERPRETER_AFTER_APPLY, 1],
  [FAULT_POINTS.INTERPRETER_AFTER_EFFECT_RECORD, 3],
  [FAULT_POINTS.INTERPRETER_BEFORE_DONE, 2],
] as const;

describe("interpreter crash drills on remote git targets", () => {
  it.concurrent.each(POINTS)(
    "finishes every effect exactly once on the remotes after a SIGKILL at %s:%i",
    async (point, n) => {
      await using dir = await tempDir("idem-remote-crash-");
      const name = `${point.replace(/\W/g, "-")}-${n}`;
      const site = daemon.createRepo(`site-${name}`);
      const docsPath = join(dir.path, "docs.git");
      createBareRepo(docsPath);
      const ws = createRemoteWorkspace(
        join(dir.path),
        { site, docs: { url: `file://${docsPath}`, path: docsPath } },
        // A lease no run outlives: the killed holder is dead on this host, so the next interpreter
        // takes its runs over at once (docs/reliability.md, A dead holder), never by waiting it out.
        { interpreter: { leaseMs: 60_000 } },
      );
      const outputs = [
        ...["a", "b"].map((id) => mixedOutput(`mixed-${id}`)),
        ...chainOutputs("chain", 3, "docs"),
      ];
      const journal = await openWorkspaceJournal(ws);
      try {
        await recordAll(journal, ws.config, outputs);
        const killed = await startChild(ws, { env: { IDEM_FAULT: `${point}:${n}` } }).done;
        expect(killed.signal, killed.stderr).toBe("SIGKILL");
        const fresh = await startChild(ws).done;
        expect(fresh.code, fresh.stderr).toBe(0);
        expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
        const takeovers = await journal.events.list({ type: "run.takeover" });
        expect(takeovers.length).toBeGreaterThanOrEqual(1);
        if (point === FAULT_POINTS.INTERPRETER_AFTER_PUSH) {
          // The pushed effect was found on the remote by the next holder, not pushed again.
          const present = await journal.events.list({ type: "effect.present" });
          expect(present.length, JSON.stringify(present)).toBeGreaterThanOrEqual(1);
        }
        expect(await journal.maintenance.integrity()).toEqual([]);
      } finally {
        await journal.close();
      }
    },
  );
});
