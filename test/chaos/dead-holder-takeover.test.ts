// A SIGKILLed interpreter's runs are taken over at once by another interpreter on the same host:
// its owner ID names this host, boot, PID namespace, PID and start time, and its process is gone.
// The lease is 10 minutes, so nothing but the dead-holder path can explain a takeover here.
import { FAULT_POINTS } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import {
  buildForTest,
  CLEAN,
  chainOutputs,
  createWorkspace,
  mixedOutput,
  openWorkspaceJournal,
  recordAll,
  startChild,
  verify,
  waitFor,
} from "./interpreter-fixture.js";

/** A lease no test outlives: a takeover within it is the dead-holder path, never an expiry. */
const LEASE_MS = 10 * 60_000;

beforeAll(() => {
  buildForTest("apps/interpreter");
});

describe("a dead holder's runs on the same host", () => {
  it.each([
    [FAULT_POINTS.INTERPRETER_AFTER_CLAIM, 1],
    [FAULT_POINTS.INTERPRETER_AFTER_APPLY, 1],
  ] as const)(
    "are taken over within the old lease after a SIGKILL at %s:%i, each effect applied once",
    async (point, n) => {
      await using dir = await tempDir("idem-dead-holder-");
      const ws = await createWorkspace(dir.path, { leaseMs: LEASE_MS });
      const outputs = [mixedOutput("held"), ...chainOutputs("chain", 2, "docs")];
      const journal = await openWorkspaceJournal(ws);
      try {
        await recordAll(journal, ws.config, outputs);
        const killed = await startChild(ws, { env: { IDEM_FAULT: `${point}:${n}` } }).done;
        expect(killed.signal, killed.stderr).toBe("SIGKILL");
        const held = await journal.runs.latest("held");
        expect(held?.state).toBe("running");
        const deadOwner = held?.leaseOwner as string;
        expect(held?.leaseUntil).toBeGreaterThan(Date.now() + LEASE_MS / 2);

        const fresh = startChild(ws);
        // Half the lease, so only the dead-holder path can pass; generous for a slow machine.
        await waitFor(
          "the run of the dead holder to be done",
          async () => (await journal.runs.latest("held"))?.state === "done",
          { timeoutMs: LEASE_MS / 2, intervalMs: 100 },
        );
        const ended = await fresh.done;
        expect(ended.code, ended.stderr).toBe(0);
        expect(await verify(ws, journal, outputs)).toEqual(CLEAN);

        const run = await journal.runs.latest("held");
        expect(run).toMatchObject({ state: "done", leaseExpiries: 1, generation: 1 });
        const takeovers = await journal.events.list({ jobId: "held", type: "run.takeover" });
        expect(takeovers).toHaveLength(1);
        expect(takeovers[0]?.data?.previousOwner).toBe(deadOwner);
        expect(takeovers[0]?.actor).not.toBe(deadOwner);
        expect(await journal.maintenance.integrity()).toEqual([]);
      } finally {
        await journal.close();
      }
    },
  );
});
