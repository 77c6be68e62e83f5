// Crash drills: a real interpreter process killed by SIGKILL at each fault point of DESIGN.md, then a
// fresh one finishes. Every key must be at its target exactly once and the ledger must agree.
import { execFileSync } from "node:child_process";
import { FAULT_POINTS } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CLEAN,
  chainOutputs,
  createWorkspace,
  mixedOutput,
  openWorkspaceJournal,
  REPO_ROOT,
  recordAll,
  startChild,
  verify,
} from "./interpreter-fixture.js";

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "apps/interpreter"], { cwd: REPO_ROOT, stdio: "ignore" });
});

const POINTS = [
  [FAULT_POINTS.INTERPRETER_AFTER_CLAIM, 1],
  [FAULT_POINTS.INTERPRETER_AFTER_INTENT, 2],
  [FAULT_POINTS.INTERPRETER_AFTER_APPLY, 1],
  [FAULT_POINTS.INTERPRETER_AFTER_APPLY, 5],
  [FAULT_POINTS.INTERPRETER_AFTER_EFFECT_RECORD, 3],
  [FAULT_POINTS.INTERPRETER_BEFORE_DONE, 2],
] as const;

describe("interpreter crash drills", () => {
  it.concurrent.each(POINTS)(
    "finishes every effect exactly once after a SIGKILL at %s:%i",
    async (point, n) => {
      await using dir = await tempDir("idem-crash-");
      // A lease no run outlives: the killed holder is dead on this host, so the next interpreter
      // takes its runs over at once (docs/reliability.md, A dead holder), never by waiting it out.
      const ws = await createWorkspace(dir.path, { leaseMs: 60_000 });
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
        // The crashed run was finished by a takeover, not re-run from scratch.
        const takeovers = await journal.events.list({ type: "run.takeover" });
        expect(takeovers.length).toBeGreaterThanOrEqual(1);
        expect(await journal.maintenance.integrity()).toEqual([]);
      } finally {
        await journal.close();
      }
    },
  );

  it("sends a run that keeps killing its interpreter dead at maxLeaseExpiries, and --once exits 1", async () => {
    await using dir = await tempDir("idem-crash-loop-");
    const ws = await createWorkspace(dir.path, { leaseMs: 500, maxLeaseExpiries: 2 });
    const outputs = [mixedOutput("poison"), mixedOutput("healthy")];
    const journal = await openWorkspaceJournal(ws);
    try {
      await recordAll(journal, ws.config, outputs.slice(0, 1));
      for (let i = 0; i < 2; i++) {
        const killed = await startChild(ws, {
          env: { IDEM_FAULT: `${FAULT_POINTS.INTERPRETER_AFTER_CLAIM}:1` },
        }).done;
        expect(killed.signal, killed.stderr).toBe("SIGKILL");
      }
      await recordAll(journal, ws.config, outputs.slice(1));
      const last = await startChild(ws).done;
      expect(last.code, last.stderr).toBe(1);
      const summary = JSON.parse(last.stdout) as { dead: { jobId: string; class: string }[] };
      expect(summary.dead).toMatchObject([{ jobId: "poison", class: "infrastructure" }]);
      expect((await journal.runs.latest("poison"))?.state).toBe("dead");
      expect((await journal.runs.latest("healthy"))?.state).toBe("done");
    } finally {
      await journal.close();
    }
  });
});
