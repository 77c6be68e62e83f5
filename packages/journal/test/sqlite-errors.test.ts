// The SQLite adapter's boundary: what better-sqlite3 throws leaves the store as an IdemError of
// idem's code, the driver's error as its cause, on a real SQLite file made to fail.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { classifyError, isIdemError } from "@idem/schema";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openSqliteJournal } from "../src/index.js";
import { idemCodeOfSqlite } from "../src/store/sqlite/sqlite-errors.js";
import { output, tempJournal } from "./helpers.js";

const causeCode = (e: unknown) => (e as { cause?: { code?: unknown } }).cause?.code;

describe("the SQLite adapter's errors", () => {
  it("answers a full database DISK_FULL (infrastructure) with SQLITE_FULL as its cause, writing nothing", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    const pages = t.journal.database.pragma("page_count", { simple: true }) as number;
    t.journal.database.pragma(`max_page_count = ${pages}`);
    const big = { ...output("b"), summary: "x".repeat(64 * 1024) };
    const e = await t.journal.outputs.record(big, { source: "cli", targets: [] }).catch((x) => x);
    expect(isIdemError(e, "DISK_FULL")).toBe(true);
    expect(causeCode(e)).toBe("SQLITE_FULL");
    expect(classifyError(e)).toBe("infrastructure");
    expect(await t.journal.outputs.has("b")).toBe(false);
  });

  it("answers a damaged database INTEGRITY on reads and writes, and a file that is no database on open", async () => {
    await using t = await tempJournal();
    await t.journal.outputs.record(output("a"), { source: "cli", targets: [] });
    // A real corruption, made in process: the outputs table's root page points past the file.
    const db = t.journal.database;
    db.unsafeMode(true);
    db.pragma("writable_schema = ON");
    db.prepare("UPDATE sqlite_master SET rootpage = 99999 WHERE name = 'outputs'").run();
    const version = db.pragma("schema_version", { simple: true }) as number;
    db.pragma(`schema_version = ${version + 1}`);
    db.pragma("writable_schema = OFF");
    db.unsafeMode(false);
    for (const call of [
      () => t.journal.outputs.get("a"),
      () => t.journal.status(),
      () => t.journal.outputs.record(output("b"), { source: "cli", targets: [] }),
    ]) {
      const e = await call().catch((x: unknown) => x);
      expect(isIdemError(e, "INTEGRITY"), String(e)).toBe(true);
      expect(causeCode(e)).toBe("SQLITE_CORRUPT");
    }
    const notADatabase = join(t.dir, "text.db");
    writeFileSync(notADatabase, "not a database at all, just text ".repeat(100));
    const e = await openSqliteJournal(notADatabase).catch((x: unknown) => x);
    // Refused at open by its header, before SQLite reads it (docs/runbook.md, "A damaged journal").
    expect(isIdemError(e, "INTEGRITY")).toBe(true);
    expect((e as Error).message).toContain(notADatabase);
  });

  it("answers a lock held past the busy timeout LOCKED (transient), nothing written", async () => {
    await using t = await tempJournal();
    const patient = await openSqliteJournal(t.path, { busyTimeoutMs: 50 });
    const holder = new Database(t.path);
    try {
      holder.exec("BEGIN EXCLUSIVE");
      const e = await patient.outputs
        .record(output("a"), { source: "cli", targets: [] })
        .catch((x: unknown) => x);
      expect(isIdemError(e, "LOCKED")).toBe(true);
      expect(causeCode(e)).toMatch(/^SQLITE_BUSY/);
      expect(classifyError(e)).toBe("transient");
      holder.exec("COMMIT");
      expect(await patient.outputs.has("a")).toBe(false);
    } finally {
      holder.close();
      await patient.close();
    }
  });

  it("maps each SQLite result code idem names, extended codes by their primary, and no other", () => {
    expect(idemCodeOfSqlite("SQLITE_BUSY_RECOVERY")).toBe("LOCKED");
    expect(idemCodeOfSqlite("SQLITE_LOCKED_SHAREDCACHE")).toBe("LOCKED");
    expect(idemCodeOfSqlite("SQLITE_FULL")).toBe("DISK_FULL");
    expect(idemCodeOfSqlite("SQLITE_IOERR_FSYNC")).toBe("IO");
    expect(idemCodeOfSqlite("SQLITE_READONLY_DBMOVED")).toBe("IO");
    expect(idemCodeOfSqlite("SQLITE_CANTOPEN")).toBe("IO");
    expect(idemCodeOfSqlite("SQLITE_CORRUPT_INDEX")).toBe("INTEGRITY");
    expect(idemCodeOfSqlite("SQLITE_NOTADB")).toBe("INTEGRITY");
    expect(idemCodeOfSqlite("SQLITE_CONSTRAINT_TRIGGER")).toBe("INTEGRITY");
    expect(idemCodeOfSqlite("SQLITE_BUSYNESS")).toBeUndefined();
    expect(idemCodeOfSqlite("SQLITE_ERROR")).toBeUndefined();
  });

  it("leaves an error that is not SQLite's as it is: a closed store's TypeError", async () => {
    const t = await tempJournal();
    await t[Symbol.asyncDispose]();
    const e = await t.journal.outputs.get("a").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TypeError);
    expect(classifyError(e)).toBe("logic");
  });
});
