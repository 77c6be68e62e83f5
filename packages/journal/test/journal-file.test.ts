// What makes a file at journal.path idem's journal (docs/runbook.md, "A damaged journal"): a new
// one is made whole aside and linked into place; one that is empty, not SQLite, not idem's, or
// found damaged by an integrity check is refused, and nothing is written to it.
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isIdemError } from "@idem/schema";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteJournal } from "../src/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "idem-journal-file-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The refusal's reason, or the error itself when it is not a refusal. */
const refusal = (e: unknown) =>
  isIdemError(e, "INTEGRITY") ? (e.details as { reason: string }).reason : e;

describe("a journal file", () => {
  it("is made whole before it is at its path: several opens at once share one, and leave nothing else", async () => {
    const path = join(dir, "sub", "journal.db");
    const stores = await Promise.all(Array.from({ length: 4 }, () => openSqliteJournal(path)));
    await stores[0]?.outputs.record(
      { jobId: "a", agent: "w", effects: [] },
      { source: "cli", targets: [] },
    );
    for (const s of stores) expect(await s.outputs.has("a")).toBe(true);
    for (const s of stores) await s.close();
    expect(readdirSync(join(dir, "sub")).filter((f) => f.includes(".new-"))).toEqual([]);
  });

  it("refuses an empty file, for writing and for reading, and leaves it empty", async () => {
    const path = join(dir, "journal.db");
    writeFileSync(path, "");
    for (const readonly of [false, true]) {
      const e = await openSqliteJournal(path, { readonly }).catch((err: unknown) => err);
      expect(refusal(e)).toBe("empty");
      expect((e as Error).message).toContain(path);
      expect((e as Error).message).toContain('docs/runbook.md, "A damaged journal"');
    }
    expect(statSync(path).size).toBe(0);
  });

  it("refuses a file that is not a SQLite database, and another program's database", async () => {
    const path = join(dir, "journal.db");
    writeFileSync(path, "x".repeat(4096));
    expect(refusal(await openSqliteJournal(path).catch((e: unknown) => e))).toBe("not-sqlite");
    rmSync(path);
    const other = new Database(path);
    other.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY)");
    other.close();
    expect(refusal(await openSqliteJournal(path).catch((e: unknown) => e))).toBe("not-idem");
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT count(*) AS n FROM sqlite_master").get()).toEqual({ n: 1 });
    check.close();
  });

  it("is marked damaged when its integrity check fails, refused until a check passes, and opened by doctor's allowDamaged", async () => {
    const path = join(dir, "journal.db");
    const j = await openSqliteJournal(path);
    for (let i = 0; i < 20; i++)
      await j.outputs.record(
        { jobId: `job-${i}`, agent: "w", effects: [] },
        { source: "cli", targets: [] },
      );
    expect(await j.maintenance.integrity()).toEqual([]);
    expect(await j.maintenance.verify()).toEqual([]);
    j.database.pragma("wal_checkpoint(TRUNCATE)");
    await j.close();
    const healthy = readFileSync(path);
    // One index entry changed: the structure holds (quick_check passes), the index lies.
    const db = new Database(path, { readonly: true });
    const { rootpage } = db
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'outputs_job_id_unique'")
      .get() as { rootpage: number };
    db.close();
    const bytes = Buffer.from(healthy);
    const page = bytes.subarray((rootpage - 1) * 4096, rootpage * 4096);
    page[page.lastIndexOf(Buffer.from("job-9")) + 4] = "z".charCodeAt(0);
    writeFileSync(path, bytes);

    const damaged = await openSqliteJournal(path);
    expect(await damaged.maintenance.verify()).toEqual([]);
    const problems = await damaged.maintenance.integrity();
    expect(problems.join("\n")).toContain("missing from index outputs_job_id_unique");
    await damaged.close();
    expect(existsSync(`${path}.damaged`)).toBe(true);
    for (const readonly of [false, true])
      expect(refusal(await openSqliteJournal(path, { readonly }).catch((e: unknown) => e))).toBe(
        "damaged",
      );
    // The healthy file back in its place: a check that passes clears the mark.
    writeFileSync(path, healthy);
    const again = await openSqliteJournal(path, { allowDamaged: true });
    expect(await again.maintenance.integrity()).toEqual([]);
    await again.close();
    expect(existsSync(`${path}.damaged`)).toBe(false);
    await (await openSqliteJournal(path)).close();
  });

  it("is marked damaged by the check before serving when a page is broken", async () => {
    const path = join(dir, "journal.db");
    const j = await openSqliteJournal(path);
    for (let i = 0; i < 40; i++)
      await j.outputs.record(
        { jobId: `p-${i}`, agent: "w", summary: "x".repeat(300), effects: [] },
        { source: "cli", targets: [] },
      );
    j.database.pragma("wal_checkpoint(TRUNCATE)");
    const { rootpage } = j.database
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'outputs'")
      .get() as { rootpage: number };
    await j.close();
    const bytes = readFileSync(path);
    bytes[(rootpage - 1) * 4096] = 0x63; // no b-tree page has this type
    writeFileSync(path, bytes);
    const opened = await openSqliteJournal(path);
    const problems = await opened.maintenance.verify();
    await opened.close();
    expect(problems[0]).toMatch(/^quick_check: /);
    expect(refusal(await openSqliteJournal(path).catch((e: unknown) => e))).toBe("damaged");
  });
});
