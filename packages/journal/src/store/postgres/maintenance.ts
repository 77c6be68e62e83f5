import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { promisify } from "node:util";
import { IdemError, redactUrl } from "@idem/schema";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import {
  CONSISTENCY_CHECKS,
  emptyPruneResult,
  missingTrigger,
  PRUNABLE_OUTPUTS,
  PRUNE_COUNTED,
  PRUNED_TABLES,
  TRIGGERS,
} from "../../domain/maintenance.js";
import { toOutput } from "../../domain/output-damage.js";
import { toEffect, toRejection, toRun } from "../../domain/records.js";
import type { JournalMaintenance } from "../../port/maintenance.js";
import type { PostgresConnection } from "./connection.js";
import { listEvents } from "./events.js";
import { postgresJobs } from "./jobs.js";
import type { OutputRow, RejectionRow, RowOf, RunRow } from "./rows.js";
import type * as tables from "./tables.js";

const run = promisify(execFile);

/** The triggers a PostgreSQL journal must have: SQLite's, and TRUNCATE refused (no row trigger fires). */
export const PG_TRIGGERS = [
  ...TRIGGERS,
  "outputs_no_truncate",
  "rejections_no_truncate",
  "events_no_truncate",
] as const;

/** Where `backup` looks for pg_dump: the PATH's directories, then `dirs`. */
export interface PgDumpSearch {
  /** Default `process.env.PATH`. */
  path?: string;
  /** Looked in after PATH; default Debian's `/usr/lib/postgresql/<version>/bin`, newest first. */
  dirs?: readonly string[];
}

/** Debian's PostgreSQL bin directories, newest version first (none when not installed). */
function debianBinDirs(): string[] {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(root, v, "bin"));
}

const isExecutable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false; // missing or not executable: look further
  }
};

/** The pg_dump `backup` runs: the first executable one on PATH, then in `dirs`; undefined if none. */
export function findPgDump(search: PgDumpSearch = {}): string | undefined {
  const path = (search.path ?? process.env.PATH ?? "").split(delimiter).filter((d) => d !== "");
  for (const dir of [...path, ...(search.dirs ?? debianBinDirs())]) {
    const file = join(dir, "pg_dump");
    if (isExecutable(file)) return file;
  }
  return undefined;
}

/** A connection URL split into the password (for PGPASSWORD) and the URL without it (for argv). */
function splitPassword(url: string): { dbname: string; password: string | undefined } {
  const u = new URL(url);
  const password = u.password === "" ? undefined : decodeURIComponent(u.password);
  u.password = "";
  return { dbname: u.toString(), password };
}

/** Removes every occurrence of `secret` from a text meant for a message. */
const scrub = (text: string, secret: string | undefined): string =>
  secret === undefined ? text : text.split(secret).join("***");

/**
 * A custom-format pg_dump of the journal's database into `file` (written beside it, then renamed:
 * a failed dump leaves no partial file). pg_dump runs by execFile with an argument array; the
 * password goes in PGPASSWORD, never in argv or a message.
 * @throws INVALID_CONFIG naming what to install or run when no pg_dump is found; IO when it fails.
 */
async function pgDumpBackup(c: PostgresConnection, file: string, search: PgDumpSearch) {
  const url = c.pool.options.connectionString;
  if (url === undefined) throw new IdemError("INVALID_CONFIG", "the journal has no database URL");
  const { dbname, password } = splitPassword(url);
  const pgDump = findPgDump(search);
  if (pgDump === undefined) {
    throw new IdemError(
      "INVALID_CONFIG",
      `pg_dump was not found on PATH nor in /usr/lib/postgresql/<version>/bin: install the PostgreSQL client programs (Debian: apt-get install postgresql-client) and run idem backup again, or run: pg_dump --format=custom --file=${file} --dbname=${redactUrl(dbname)}${password === undefined ? "" : " (with the password in PGPASSWORD)"}`,
      { details: { field: "PATH" } },
    );
  }
  const tmp = join(dirname(file), `.${Date.now()}-${process.pid}.pgdump.tmp`);
  try {
    await run(pgDump, ["--format=custom", `--file=${tmp}`, `--dbname=${dbname}`], {
      env: password === undefined ? process.env : { ...process.env, PGPASSWORD: password },
      maxBuffer: 16 * 1024 * 1024,
    });
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    const stderr = (e as { stderr?: string }).stderr ?? (e as Error).message;
    throw new IdemError(
      "IO",
      `pg_dump of ${c.location} failed: ${scrub(stderr.trim(), password)}`,
      {
        details: { file },
      },
    );
  }
}

/** Prune, integrity and backup of a PostgreSQL journal. */
export function postgresMaintenance(
  c: PostgresConnection,
  options: { pgDump?: PgDumpSearch } = {},
): JournalMaintenance {
  const jobs = postgresJobs(c);
  return {
    async prune(prune) {
      const before = prune.before;
      const old = await c.query<OutputRow>(PRUNABLE_OUTPUTS.replace("?", "$1"), [before]);
      const result = emptyPruneResult(old.length);
      for (const o of old) {
        for (const [field, table] of Object.entries(PRUNE_COUNTED) as [
          keyof typeof PRUNE_COUNTED,
          string,
        ][]) {
          const [r] = await c.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM ${table} WHERE job_id = $1`,
            [o.job_id],
          );
          result[field] += r?.n ?? 0;
        }
      }
      if (prune.dryRun) return result;
      for (const o of old) {
        // Archive first (the caller fsyncs it), then delete in one transaction per output.
        await prune.archive?.({
          output: toOutput(o),
          runs: (
            await c.query<RunRow>("SELECT * FROM runs WHERE job_id = $1 ORDER BY generation", [
              o.job_id,
            ])
          ).map(toRun),
          effects: (
            await c.query<RowOf<typeof tables.effects>>(
              "SELECT * FROM effects WHERE job_id = $1 ORDER BY generation, idx",
              [o.job_id],
            )
          ).map(toEffect),
          events: await listEvents(c, { jobId: o.job_id }),
          rejections: (
            await c.query<RejectionRow>("SELECT * FROM rejections WHERE job_id = $1 ORDER BY id", [
              o.job_id,
            ])
          ).map(toRejection),
          job: await jobs.get(o.job_id),
        });
        await c.tx(async (client) => {
          // The guard row is seen by this transaction's triggers only, and gone before it commits.
          await client.query("INSERT INTO prune_guard (id) VALUES (1)");
          await client.query(
            "DELETE FROM active_targets WHERE run_id IN (SELECT id FROM runs WHERE job_id = $1)",
            [o.job_id],
          );
          for (const table of PRUNED_TABLES) {
            await client.query(`DELETE FROM ${table} WHERE job_id = $1`, [o.job_id]);
          }
          await client.query("DELETE FROM prune_guard");
        });
      }
      if (result.outputs > 0) {
        await c.tx((client) =>
          c.event(client, {
            jobId: null,
            type: E.JOURNAL_PRUNED,
            actor: prune.actor ?? "prune",
            data: { ...result, before },
          }),
        );
      }
      return result;
    },

    async integrity() {
      const problems: string[] = [];
      const [settings] = await c.query<{
        fsync: string;
        synchronous_commit: string;
        full_page_writes: string;
      }>(
        `SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS synchronous_commit,
         current_setting('full_page_writes') AS full_page_writes`,
      );
      if (settings?.fsync !== "on") problems.push(`fsync is ${settings?.fsync}, expected on`);
      if (settings?.synchronous_commit === "off")
        problems.push("synchronous_commit is off: a recorded output may be lost on a crash");
      if (settings?.full_page_writes !== "on")
        problems.push(
          `full_page_writes is ${settings?.full_page_writes}: a crash mid-write can tear a page`,
        );
      problems.push(...(await missingPgTriggers(c)));
      const [guard] = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM prune_guard");
      if ((guard?.n ?? 0) > 0)
        problems.push("prune_guard holds a committed row: deletes of outputs are not refused");
      for (const check of CONSISTENCY_CHECKS) {
        for (const row of await c.query<Record<string, unknown>>(check.sql))
          problems.push(check.problem(row));
      }
      return problems;
    },

    async verify() {
      return missingPgTriggers(c);
    },

    async backup(file) {
      await pgDumpBackup(c, file, options.pgDump ?? {});
    },
  };
}

/** Each immutability trigger the journal lacks, as a problem: a disabled one protects nothing. */
async function missingPgTriggers(c: PostgresConnection): Promise<string[]> {
  const present = new Set(
    (
      await c.query<{ name: string }>(
        `SELECT t.tgname AS name FROM pg_trigger t JOIN pg_class r ON r.oid = t.tgrelid
         WHERE r.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal AND t.tgenabled <> 'D'`,
      )
    ).map((r) => r.name),
  );
  return PG_TRIGGERS.filter((t) => !present.has(t)).map(missingTrigger);
}
