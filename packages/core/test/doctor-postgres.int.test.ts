// idem doctor on a PostgreSQL journal: the server's and the role's durability settings checked,
// each one off a violation (exit 3) naming it; a database without the tables a warning.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { PostgresJournalStore } from "@idem/journal";
import { parseConfig } from "@idem/schema";
import { postgresBinDir, startPostgres } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "../src/doctor/run-doctor.js";

const run = promisify(execFile);
let pg: Awaited<ReturnType<typeof startPostgres>>;
let databases = 0;

beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});

function config(url: string) {
  const r = parseConfig({ journal: { url } }, { dir: "/nonexistent", file: null });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

async function psql(url: string, sql: string): Promise<void> {
  await run(join(postgresBinDir() as string, "psql"), [
    "-X",
    "-q",
    "-v",
    "ON_ERROR_STOP=1",
    url,
    "-c",
    sql,
  ]);
}

async function migrated(): Promise<string> {
  const url = await pg.createDatabase(`doctor_${++databases}`);
  await (await PostgresJournalStore.open(url)).close();
  return url;
}

const journalViolations = (findings: { severity: string; key: string; finding: string }[]) =>
  findings.filter((f) => f.severity === "violation" && f.key.startsWith("journal"));

/** Doctor's report once the server shows `count` journal violations (a reload is asynchronous). */
async function waitForFindings(url: string, count: number) {
  for (let i = 0; ; i++) {
    const report = await runDoctor(config(url));
    if (journalViolations(report.findings).length === count || i >= 300) return report;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("doctor on a PostgreSQL journal", () => {
  it("finds nothing wrong with a migrated journal on a durable server", async () => {
    const report = await runDoctor(config(await migrated()));
    expect(journalViolations(report.findings)).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it("names synchronous_commit off for the journal's role as a violation (exit 3)", async () => {
    const url = await migrated();
    const db = new URL(url).pathname.slice(1);
    await psql(url, `ALTER ROLE postgres IN DATABASE ${db} SET synchronous_commit = off`);
    const report = await runDoctor(config(url));
    expect(report.ok).toBe(false);
    const found = journalViolations(report.findings);
    expect(found.map((f) => f.finding.split(" ")[0])).toEqual(["synchronous_commit"]);
    expect(JSON.stringify(report)).not.toContain("password");
  });

  it("names fsync and full_page_writes off on the server as violations (exit 3), each by its name", async () => {
    const url = await migrated();
    // Both are server-wide (sighup) settings: ALTER SYSTEM plus a reload changes them on this
    // disposable server only, and they are put back before the next test.
    await psql(url, "ALTER SYSTEM SET fsync = off");
    await psql(url, "ALTER SYSTEM SET full_page_writes = off");
    await psql(url, "SELECT pg_reload_conf()");
    try {
      const report = await waitForFindings(url, 2);
      expect(report.ok).toBe(false);
      const names = journalViolations(report.findings).map((f) => f.finding.split(" ")[0]);
      expect(names.sort()).toEqual(["fsync", "full_page_writes"]);
    } finally {
      await psql(url, "ALTER SYSTEM RESET fsync");
      await psql(url, "ALTER SYSTEM RESET full_page_writes");
      await psql(url, "SELECT pg_reload_conf()");
      await waitForFindings(url, 0);
    }
  });

  it("reports a database without the journal's tables as a warning to run idem init, creating nothing", async () => {
    const url = await pg.createDatabase(`doctor_${++databases}`);
    const report = await runDoctor(config(url));
    expect(report.findings).toContainEqual(
      expect.objectContaining({ severity: "warning", key: "journal.url" }),
    );
    await expect(PostgresJournalStore.open(url, { readonly: true })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
