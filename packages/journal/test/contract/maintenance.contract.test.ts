import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type AgentOutput, isIdemError } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipUnless } from "../../../../test/support/skip.js";
import { type ArchivedOutput, JOURNAL_EVENTS as E, openSqliteJournal } from "../../src/index.js";
import { PostgresConnection } from "../../src/store/postgres/connection.js";
import { findPgDump, postgresMaintenance } from "../../src/store/postgres/maintenance.js";
import { type QueueStore, queue, rawSql, until } from "./queue-store.js";
import { STORES, type StoreFactory } from "./stores.js";

const run = promisify(execFile);
const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  summary: "ok",
  effects: [],
});
const errorOf = async (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe.each(STORES.map((make) => [make().name, make] as const))(
  "the journal's maintenance on %s",
  (name, make) => {
    let factory: StoreFactory;
    const open: QueueStore[] = [];
    const dir = mkdtempSync(join(tmpdir(), "idem-maint-"));
    const store = async () => {
      const s = queue(await factory.open());
      open.push(s);
      return s;
    };
    beforeAll(() => {
      factory = make();
    });
    afterAll(async () => {
      for (const s of open) await s.close();
      await factory.teardown();
      rmSync(dir, { recursive: true, force: true });
    });

    it("refuses to update or delete an output, or delete a run, outside a prune", async () => {
      const j = await store();
      await j.outputs.record(out("g-1"), { source: "cli", targets: [] });
      for (const sql of [
        "UPDATE outputs SET agent = 'x'",
        "DELETE FROM outputs",
        "DELETE FROM runs",
        "DELETE FROM events",
      ]) {
        const e = await errorOf(rawSql(factory, j, { sqlite: sql, postgres: sql }));
        expect(String(e)).toMatch(/immutable|deleted only by prune|prune/);
      }
      expect(await j.outputs.has("g-1")).toBe(true);
      expect((await j.status()).runs.pending).toBe(1);
    });

    it("prunes only outputs older than the horizon whose runs are finished, archiving each first", async () => {
      const j = await store();
      await j.jobs.enqueue({ jobId: "old-done", agent: "writer", input: {} });
      await j.outputs.record(out("old-done"), { source: "cli", targets: ["file:a"] });
      await j.outputs.record(out("old-active"), { source: "cli", targets: [] });
      const horizon = Date.now() + 1;
      await until(async () => (Date.now() > horizon ? true : undefined), "the horizon to pass");
      await j.outputs.record(out("new-done"), { source: "cli", targets: [] });
      // The interpreter finished these two runs (old-active's stays pending: it is kept).
      const finish = "UPDATE runs SET state = 'done' WHERE job_id IN ('old-done', 'new-done')";
      await rawSql(factory, j, { sqlite: finish, postgres: finish });

      const dry = await j.maintenance.prune({ before: horizon, dryRun: true });
      expect(dry).toEqual({ outputs: 1, runs: 1, effects: 0, events: 1, rejections: 0, jobs: 1 });
      expect(await j.outputs.has("old-done")).toBe(true);

      const archived: ArchivedOutput[] = [];
      const pruned = await j.maintenance.prune({
        before: horizon,
        actor: "ops",
        archive: (a) => {
          archived.push(a);
        },
      });
      expect(pruned).toEqual(dry);
      expect(archived.map((a) => [a.output.jobId, a.runs.length, a.job?.jobId])).toEqual([
        ["old-done", 1, "old-done"],
      ]);
      expect(archived[0]?.events.map((e) => e.type)).toEqual([E.OUTPUT_RECORDED]);
      expect(await j.outputs.has("old-done")).toBe(false);
      expect(await j.jobs.get("old-done")).toBeUndefined();
      expect(await j.outputs.has("old-active")).toBe(true);
      expect(await j.outputs.has("new-done")).toBe(true);
      const [event] = await j.events.list({ type: E.JOURNAL_PRUNED });
      expect([event?.actor, event?.data?.outputs, event?.data?.before]).toEqual([
        "ops",
        1,
        horizon,
      ]);
      expect(await j.maintenance.prune({ before: horizon })).toMatchObject({ outputs: 0 });
      expect(await j.maintenance.integrity()).toEqual([]);
      // The guard is gone with the prune's transaction: deletes are refused again.
      const e = await errorOf(
        rawSql(factory, j, { sqlite: "DELETE FROM outputs", postgres: "DELETE FROM outputs" }),
      );
      expect(e).toBeDefined();
    });

    it("stops a prune where its archive throws, keeping that output", async () => {
      const j = await store();
      await j.outputs.record(out("arch-1"), { source: "cli", targets: [] });
      const finish = "UPDATE runs SET state = 'done' WHERE job_id = 'arch-1'";
      await rawSql(factory, j, { sqlite: finish, postgres: finish });
      const e = await errorOf(
        j.maintenance.prune({
          before: Date.now() + 3_600_000,
          archive: () => {
            throw new Error("archive disk full");
          },
        }),
      );
      expect(String(e)).toContain("archive disk full");
      expect(await j.outputs.has("arch-1")).toBe(true);
    });

    it("finds nothing wrong with a fresh journal, and names a missing immutability trigger", async () => {
      const j = await store();
      expect(await j.maintenance.integrity()).toEqual([]);
      await rawSql(factory, j, {
        sqlite: "DROP TRIGGER outputs_no_delete",
        postgres: "DROP TRIGGER outputs_no_delete ON outputs",
      });
      const problems = await j.maintenance.integrity();
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain("outputs_no_delete");
    });

    it("backs the journal up into a file while it is in use", async () => {
      const j = await store();
      await j.outputs.record(out("b-1"), { source: "cli", targets: [] });
      const file = join(dir, `backup-${name}`);
      await j.maintenance.backup(file);
      if (name === "sqlite") {
        const copy = await openSqliteJournal(file);
        expect(await copy.outputs.has("b-1")).toBe(true);
        await copy.close();
        return;
      }
      // PostgreSQL: a pg_dump custom-format archive, which pg_restore --list reads.
      const pgRestore = join(findPgDump()?.replace(/pg_dump$/, "") ?? "", "pg_restore");
      const { stdout } = await run(pgRestore, ["--list", file]);
      expect(stdout).toMatch(/TABLE DATA public outputs/);
      expect(stdout).toMatch(/TRIGGER public outputs outputs_no_delete/);
    });

    it(
      "(postgres only: pg_dump) tells what to run when no pg_dump is found, and keeps the password out of every message",
      skipUnless(name === "postgres", "PostgreSQL store only: pg_dump"),
      async () => {
        const j = await store();
        const url = new URL(j.location);
        url.password = "s3cret-pw"; // the test cluster trusts loopback: any password connects
        const c = await PostgresConnection.open(url.toString());
        try {
          const missing = postgresMaintenance(c, { pgDump: { path: "", dirs: [] } });
          const e = await errorOf(missing.backup(join(dir, "never")));
          expect(isIdemError(e, "INVALID_CONFIG")).toBe(true);
          const message = (e as Error).message;
          expect(message).toContain("pg_dump --format=custom");
          expect(message).toContain("PGPASSWORD");
          expect(message).not.toContain("s3cret-pw");
          expect(existsSync(join(dir, "never"))).toBe(false);

          const found = postgresMaintenance(c);
          const failed = await errorOf(found.backup(join(dir, "no-such-dir", "f")));
          expect(isIdemError(failed, "IO")).toBe(true);
          expect((failed as Error).message).not.toContain("s3cret-pw");
          await found.backup(join(dir, "with-password"));
          expect(existsSync(join(dir, "with-password"))).toBe(true);
        } finally {
          await c.close();
        }
      },
    );
  },
);
