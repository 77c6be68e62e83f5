// A journal that exists but is empty, is not idem's, or fails its integrity check, with the built
// CLI (issue 31, findings 3 and 9): every command but doctor refuses it, naming the file and the
// runbook entry; `audit` reports the keys at a target that a journal restored from an older backup
// does not know, and exits 3.
import { copyFileSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { commitSpec, type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem } from "./ops-helpers.js";

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close().catch(() => {});
  fx = undefined;
});

const RUNBOOK = 'docs/runbook.md, "A damaged journal"';

/** A workspace whose journal recorded `n` outputs, each committed to the repo with its key. */
async function recorded(n: number): Promise<OpsFixture> {
  const f = await opsFixture({
    agents: { writer: { command: [process.execPath, "-e", "process.exit(1)"] } },
  });
  for (let i = 0; i < n; i++) await f.record(`job-${i}`, [commitSpec(`f${i}.txt`, `v${i}\n`)]);
  expect((await f.interpret()).runs.done).toBe(n);
  await f.journal.close();
  return f;
}

/** Every command a person runs on a workspace, with what each needs. */
function commands(f: OpsFixture): string[][] {
  const output = join(f.ws.dir, "output.json");
  writeFileSync(output, JSON.stringify({ jobId: "new-1", agent: "writer", effects: [] }));
  return [
    ["status"],
    ["ls"],
    ["show", "job-0"],
    ["dlq", "ls"],
    ["submit", output],
    ["audit"],
    ["replay", "--all", "--dry-run"],
    ["interpreter", "--once"],
    ["executor", "--no-api"],
    ["backup", join(f.ws.dir, "copy.db")],
  ];
}

describe("a journal truncated to 0 bytes", () => {
  it("is refused by every command, exit 3 naming the file and the runbook entry, and stays as it was; doctor reports it", async () => {
    fx = await recorded(4);
    const cfg = ["--config", fx.ws.config];
    truncateSync(fx.journalPath, 0);
    rmSync(`${fx.journalPath}-wal`, { force: true });
    rmSync(`${fx.journalPath}-shm`, { force: true });
    for (const args of commands(fx)) {
      const r = await idem([...args, ...cfg], { timeoutMs: 120_000 });
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(3);
      expect(r.stderr, args.join(" ")).toContain(fx.journalPath);
      expect(r.stderr, args.join(" ")).toContain("empty (0 bytes)");
      expect(r.stderr, args.join(" ")).toContain(RUNBOOK);
      expect(statSync(fx.journalPath).size, args.join(" ")).toBe(0);
    }
    const doctor = await idem(["doctor", "--json", ...cfg]);
    expect(doctor.code).toBe(3);
    const findings = JSON.parse(doctor.stdout).findings as { key: string; finding: string }[];
    expect(findings.find((f) => f.key === "journal")?.finding).toContain("empty (0 bytes)");
    expect(statSync(fx.journalPath).size).toBe(0);
  }, 600_000);

  it("and a file that is not an idem journal: another program's database, or not a database", async () => {
    fx = await recorded(1);
    const cfg = ["--config", fx.ws.config];
    for (const f of [fx.journalPath, `${fx.journalPath}-wal`, `${fx.journalPath}-shm`])
      rmSync(f, { force: true });
    const other = new Database(fx.journalPath);
    other.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)");
    other.close();
    const foreign = await idem(["status", ...cfg]);
    expect(foreign.code).toBe(3);
    expect(foreign.stderr).toContain("is not an idem journal");
    expect(foreign.stderr).toContain(RUNBOOK);
    // Nothing was created in it.
    const check = new Database(fx.journalPath, { readonly: true });
    const tables = check.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
    check.close();
    expect(tables).toEqual([{ name: "notes" }]);
    writeFileSync(fx.journalPath, "not a database at all, just text, long enough to be a header");
    const text = await idem(["ls", ...cfg]);
    expect(text.code).toBe(3);
    expect(text.stderr).toContain("is not a SQLite database");
  });
});

/**
 * Breaks one entry of the outputs' job_id index without touching its structure: `quick_check`
 * passes, `integrity_check` finds the row missing from the index, and SQLite still writes.
 */
function breakIndex(path: string): void {
  const db = new Database(path);
  const { rootpage } = db
    .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'outputs_job_id_unique'")
    .get() as { rootpage: number };
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  const bytes = readFileSync(path);
  const page = bytes.subarray((rootpage - 1) * 4096, rootpage * 4096);
  const at = page.lastIndexOf(Buffer.from("job-3"));
  expect(at).toBeGreaterThan(0);
  page[at + 4] = "z".charCodeAt(0); // job-3 -> job-z: still last in order, no longer the row's
  writeFileSync(path, bytes);
}

describe("a journal that fails its integrity check", () => {
  it("is marked by doctor, then refused by submit and the executor, until doctor finds a restored one sound", async () => {
    fx = await recorded(4);
    const cfg = ["--config", fx.ws.config];
    const backup = join(fx.ws.dir, "backup.db");
    expect((await idem(["backup", backup, ...cfg])).code).toBe(0);
    breakIndex(fx.journalPath);
    const doctor = await idem(["doctor", "--json", ...cfg]);
    expect(doctor.code).toBe(3);
    expect(doctor.stdout).toContain("missing from index outputs_job_id_unique");
    const [submit] = commands(fx).filter((a) => a[0] === "submit");
    for (const args of [submit as string[], ["executor", "--no-api"], ["status"]]) {
      const r = await idem([...args, ...cfg]);
      expect(r.code, args.join(" ")).toBe(3);
      expect(r.stderr).toContain("failed its integrity check");
      expect(r.stderr).toContain(RUNBOOK);
    }
    // Restored as the runbook says: the backup in its place, then doctor, which clears the mark.
    rmSync(`${fx.journalPath}-wal`, { force: true });
    rmSync(`${fx.journalPath}-shm`, { force: true });
    copyFileSync(backup, fx.journalPath);
    expect((await idem(["status", ...cfg])).code).toBe(3);
    const again = await idem(["doctor", ...cfg]);
    expect(again.code, again.stdout).toBe(0);
    const status = await idem(["status", "--json", ...cfg]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).outputs).toBe(4);
  }, 300_000);

  it("is refused by the executor's own check at start when its pages are damaged, and marked for every later command", async () => {
    fx = await recorded(30);
    const cfg = ["--config", fx.ws.config];
    const db = new Database(fx.journalPath);
    db.pragma("wal_checkpoint(TRUNCATE)");
    const { rootpage } = db
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'outputs'")
      .get() as { rootpage: number };
    db.close();
    // The outputs table's root page gets a page type that no b-tree page has.
    const bytes = readFileSync(fx.journalPath);
    bytes[(rootpage - 1) * 4096] = 0x63;
    writeFileSync(fx.journalPath, bytes);
    const executor = await idem(["executor", "--no-api", ...cfg]);
    expect(executor.code, executor.stderr).toBe(3);
    expect(executor.stderr).toContain(fx.journalPath);
    expect(executor.stderr).toContain(RUNBOOK);
    const status = await idem(["status", ...cfg]);
    expect(status.code).toBe(3);
    expect(status.stderr).toContain("failed its integrity check");
  });
});

describe("a journal restored from an older backup", () => {
  it("makes audit list the keys at the target it does not know, and exit 3", async () => {
    fx = await opsFixture();
    const f = fx;
    const cfg = ["--config", f.ws.config];
    const commit = async (from: number, to: number) => {
      for (let i = from; i < to; i++)
        await f.record(`job-${i}`, [commitSpec(`f${i}.txt`, `v${i}\n`)]);
      expect((await f.interpret()).runs.done).toBe(to - from);
    };
    await commit(0, 2);
    const backup = join(f.ws.dir, "backup.db");
    expect((await idem(["backup", backup, ...cfg])).code).toBe(0);
    await commit(2, 5);
    await f.journal.close();
    expect((await idem(["audit", ...cfg])).code).toBe(0);
    for (const file of [f.journalPath, `${f.journalPath}-wal`, `${f.journalPath}-shm`])
      rmSync(file, { force: true });
    copyFileSync(backup, f.journalPath);
    // A key that no idem effect ever had, written by hand.
    gitIn(
      f.repoDir,
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "by hand\n\nIdem-Effect: \u001b[2Jforged",
    );
    const r = await idem(["audit", "--json", ...cfg]);
    expect(r.code).toBe(3);
    const report = JSON.parse(r.stdout) as { unknownKeys: { key: string; target: string }[] };
    expect(report.unknownKeys.map((u) => u.key)).toEqual([
      "\u001b[2Jforged",
      "job-2/0",
      "job-3/0",
      "job-4/0",
    ]);
    expect(report.unknownKeys.every((u) => u.target === "site@main")).toBe(true);
    const human = await idem(["audit", ...cfg]);
    expect(human.code).toBe(3);
    expect(human.stdout).toContain("unknown keys");
    expect(human.stdout).toContain("\\e[2Jforged");
    expect(human.stdout).not.toContain("\u001b[2J");
  });
});
