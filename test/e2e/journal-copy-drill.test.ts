// The chaos drill's journal copied to PostgreSQL (issue 18, "How we will know"): the drill
// (200 jobs, 10 kills, about 50 s here) writes a journal, the copy is SIGKILLed after its fourth
// batch and run again, and every table's count and content hash must be equal. Slower than the
// rest of test/e2e, so it runs when IDEM_COPY_DRILL=1 (e.g. beside `npm run drill`).
import { execFile, execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { startPostgres } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { IDEM_BIN, REPO_ROOT } from "../chaos/interpreter-fixture.js";
import { skipUnless } from "../support/skip.js";

const run = promisify(execFile);

const ASKED = skipUnless(process.env.IDEM_COPY_DRILL === "1", "slow: runs with IDEM_COPY_DRILL=1");

describe("idem journal copy of the chaos drill's journal (IDEM_COPY_DRILL=1: slow)", ASKED, () => {
  it("copies the drill's journal, SIGKILLed halfway and run again, every count and hash equal", async () => {
    execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
    const drill = await run(
      process.execPath,
      [
        join(REPO_ROOT, "test/chaos/drill.mjs"),
        "--jobs",
        "200",
        "--kills",
        "10",
        "--nats-restarts",
        "1",
        "--keep",
      ],
      { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    const work = /workspace kept at (\S+)/.exec(drill.stdout + drill.stderr)?.[1];
    expect(work).toBeDefined();
    await using pg = await startPostgres();
    try {
      const url = await pg.createDatabase("drill");
      const from = join(work as string, "journal.db");
      const copy = ["journal", "copy", "--from", from, "--to", url, "--batch", "100", "--json"];
      const killed = await run(process.execPath, [IDEM_BIN, ...copy], {
        env: { ...process.env, IDEM_FAULT: "journal-copy.after-batch:4" },
      }).then(
        () => "exited",
        (e: { signal?: string }) => e.signal,
      );
      expect(killed).toBe("SIGKILL");
      const again = await run(process.execPath, [IDEM_BIN, ...copy], {
        env: { ...process.env, IDEM_FAULT: "" },
      });
      const report = JSON.parse(again.stdout) as {
        verified: boolean;
        tables: {
          table: string;
          source: { rows: number };
          target: { rows: number };
          equal: boolean;
        }[];
      };
      expect(report.verified).toBe(true);
      for (const t of report.tables) expect(t.target.rows, t.table).toBe(t.source.rows);
      expect(report.tables.find((t) => t.table === "outputs")?.source.rows).toBe(200);
    } finally {
      rmSync(work as string, { recursive: true, force: true });
    }
  });
});
