// Issue 42, item 4: `idem init` wrote the config (it holds api.token) and the journal readable by
// everyone (0644). Under a umask that lets others read (022), the config and the journal are now
// 0600, .idem/ and its archive 0700, and SQLite's -wal and -shm files follow the journal's mode.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN } from "./ops-helpers.js";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("idem init's files", () => {
  it("are its owner's only under umask 022: the config and journal 0600, .idem/ and the archive 0700, -wal and -shm too", async () => {
    dir = mkdtempSync(join(tmpdir(), "idem-init-modes-"));
    execFileSync("sh", ["-c", 'umask 022 && exec "$0" "$1" init', process.execPath, IDEM_BIN], {
      cwd: dir,
      env: cleanEnv(),
    });
    expect(mode(join(dir, "idem.config.json"))).toBe("600");
    expect(mode(join(dir, ".idem"))).toBe("700");
    expect(mode(join(dir, ".idem/archive"))).toBe("700");
    expect(mode(join(dir, ".idem/journal.db"))).toBe("600");
    // A writer open: SQLite makes the -wal and -shm files with the journal's mode.
    const journal = await openSqliteJournal(join(dir, ".idem/journal.db"), { create: false });
    try {
      await journal.outputs.record(
        { jobId: "m-1", agent: "writer", effects: [] },
        { source: "cli", targets: [] },
      );
      expect(mode(join(dir, ".idem/journal.db-wal"))).toBe("600");
      expect(mode(join(dir, ".idem/journal.db-shm"))).toBe("600");
    } finally {
      await journal.close();
    }
    // --force overwrites an older, wider config with 0600 too.
    execFileSync(
      "sh",
      [
        "-c",
        'chmod 644 idem.config.json && umask 022 && exec "$0" "$1" init --force',
        process.execPath,
        IDEM_BIN,
      ],
      {
        cwd: dir,
        env: cleanEnv(),
      },
    );
    expect(mode(join(dir, "idem.config.json"))).toBe("600");
  });
});
