import { type PostgresHandle, postgresBinDir, startPostgres } from "@idem/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildForTest, CLEAN, verify, waitFor } from "../chaos/interpreter-fixture.js";
import { skipUnless } from "../support/skip.js";
import { commits, type Incident, incident } from "./incident.js";
import { shell, typed } from "./runbook.js";

// docs/runbook.md, "PostgreSQL is down": the journal's server SIGKILLed under a running interpreter.
// doctor says `unavailable` (exit 1) and never "backup"; once the server is back, doctor passes,
// the interpreter carries on without a restart and every effect is at its target once.

const SECTION = "PostgreSQL is down";
let pg: PostgresHandle | undefined;
let fx: Incident | undefined;
beforeAll(async () => {
  buildForTest("apps/cli");
  if (postgresBinDir()) pg = await startPostgres();
}, 120_000);
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});
afterAll(async () => {
  await pg?.stop();
});

describe(
  "PostgreSQL is down, the runbook's way",
  skipUnless(postgresBinDir() !== undefined, "needs PostgreSQL's initdb (Debian postgresql)"),
  () => {
    it("doctor waits for the server instead of calling for a backup, and the interpreter carries on once it is back", async () => {
      const server = pg as PostgresHandle;
      const url = await server.createDatabase("runbook_outage");
      fx = await incident({ leaseMs: 2000 }, { journal: { url } });
      const cwd = fx.dir;
      const init = await shell("idem init --journal", { cwd });
      expect(init.code, init.stderr).toBe(0);
      const before = ["pg-1", "pg-2"].map((id) => commits(id));
      await fx.record(before);
      fx.start(["interpreter"]);
      const j = await fx.journal();
      const allDone = (outs: typeof before) => async () => {
        for (const o of outs) if ((await j.runs.latest(o.jobId))?.state !== "done") return false;
        return true;
      };
      await waitFor("the first outputs applied", allDone(before), { intervalMs: 100 });

      await server.kill();
      for (let round = 0; round < 2; round++) {
        const doctor = await shell(typed(SECTION, /^idem doctor\b/), { cwd });
        expect(doctor.code, doctor.stdout).toBe(1);
        expect(doctor.stdout).toMatch(/unavailable\s*│\s*journal/);
        expect(doctor.stdout).toContain("cannot reach the journal");
        expect(doctor.stdout).not.toMatch(/restore|backup/i);
      }
      const status = await shell(typed(SECTION, /^idem status\b/), { cwd });
      expect(status.code).toBe(1);
      expect(status.stderr).toContain("unavailable");

      await server.restart();
      const doctor = await shell(typed(SECTION, /^idem doctor\b/), { cwd });
      expect(doctor.code, doctor.stdout).toBe(0);
      const after = ["pg-3", "pg-4"].map((id) => commits(id));
      await waitFor(
        "the journal back",
        async () => {
          await fx?.record(after);
          return true;
        },
        { ignoreErrors: true, intervalMs: 200 },
      );
      await waitFor("the interpreter to carry on", allDone(after), { intervalMs: 100 });
      expect(await verify(fx.ws, j, [...before, ...after])).toEqual(CLEAN);
      const audit = await shell(typed(SECTION, /^idem audit\b/), { cwd });
      expect(audit.code, audit.stdout).toBe(0);
    });
  },
);
