// `idem journal copy` as an operator runs it: the real CLI in a child process, SIGKILLed at its
// fault points and run again, on a disposable PostgreSQL of the test's own.
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { PostgresJournalStore } from "@idem/journal";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillJournal } from "../../packages/journal/test/copy-fixture.js";
import { output, tempJournal } from "../../packages/journal/test/helpers.js";
import { IDEM_BIN, REPO_ROOT } from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);

interface Ran {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

async function idem(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(process.execPath, [IDEM_BIN, ...args], {
      env: { ...process.env, IDEM_FAULT: "", ...env },
    });
    return { code: 0, signal: null, stdout, stderr };
  } catch (e) {
    const err = e as { code: number | null; signal: string | null; stdout: string; stderr: string };
    return { code: err.code, signal: err.signal, stdout: err.stdout, stderr: err.stderr };
  }
}

interface Report {
  verified: boolean;
  to: string;
  tables: {
    table: string;
    source: { rows: number };
    target: { rows: number };
    inserted: number;
    equal: boolean;
  }[];
}

const outputsIn = async (url: string) => {
  const s = await PostgresJournalStore.open(url);
  try {
    return (await s.status()).outputs;
  } finally {
    await s.close();
  }
};

describe("idem journal copy", () => {
  let pg: PostgresHandle;
  let n = 0;
  const database = () => pg.createDatabase(`cli_copy_${++n}`);
  beforeAll(async () => {
    execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
    pg = await startPostgres();
  }, 300_000);
  afterAll(async () => {
    await pg?.stop();
  });

  it("SIGKILLed after its third batch, then run again: every table equal, nothing twice", async () => {
    await using t = await tempJournal();
    await fillJournal(t.journal, t.clock, 40);
    const url = await database();
    const killed = await idem(
      ["journal", "copy", "--from", t.path, "--to", url, "--batch", "5", "--json"],
      {
        IDEM_FAULT: "journal-copy.after-batch:3",
      },
    );
    expect(killed.signal).toBe("SIGKILL");
    expect(await outputsIn(url)).toBe(15);

    const again = await idem([
      "journal",
      "copy",
      "--from",
      t.path,
      "--to",
      url,
      "--batch",
      "5",
      "--json",
    ]);
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout) as Report;
    expect(report.verified).toBe(true);
    for (const table of report.tables) {
      expect(table.equal, table.table).toBe(true);
      expect(table.target.rows, table.table).toBe(table.source.rows);
    }
    const outputs = report.tables.find((x) => x.table === "outputs");
    expect(outputs?.inserted).toBe(25);
    expect(outputs?.source.rows).toBe(40);
  });

  it("SIGKILLed inside a batch's transaction: that batch is not in the target, the next run completes it", async () => {
    await using t = await tempJournal();
    await fillJournal(t.journal, t.clock, 20);
    const url = await database();
    const killed = await idem(["journal", "copy", "--from", t.path, "--to", url, "--batch", "5"], {
      IDEM_FAULT: "journal-copy.before-commit:2",
    });
    expect(killed.signal).toBe("SIGKILL");
    expect(await outputsIn(url)).toBe(5);
    const again = await idem(["journal", "copy", "--from", t.path, "--to", url, "--batch", "5"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/outputs\s.*20\s.*20\s.*15\s.*yes/);
    expect(again.stdout).toContain("every table's count and content hash equal");
  });

  it("refuses a target holding other data with exit 1, leaves it unchanged and never prints the password", async () => {
    await using t = await tempJournal();
    await fillJournal(t.journal, t.clock);
    const plain = await database();
    const other = await PostgresJournalStore.open(plain);
    await other.outputs.record(output("someone-else"), { source: "cli", targets: [] });
    const before = await other.status();
    const url = plain.replace("postgres://postgres@", "postgres://postgres:s3cret-pw@");
    const refused = await idem(["journal", "copy", "--from", t.path, "--to", url, "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds data that is not in .*outputs row/);
    expect(refused.stderr + refused.stdout).not.toContain("s3cret-pw");
    expect(await other.status()).toEqual(before);
    await other.close();

    const fresh = (await database()).replace(
      "postgres://postgres@",
      "postgres://postgres:s3cret-pw@",
    );
    const ok = await idem(["journal", "copy", "--from", t.path, "--to", fresh, "--json"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain("s3cret-pw");
    expect((JSON.parse(ok.stdout) as Report).to).toContain("***");
  });

  it("bad usage exits 2: not a postgres URL, a bad batch, no --to", async () => {
    await using t = await tempJournal();
    const http = await idem(["journal", "copy", "--from", t.path, "--to", "http://u:pw@h/db"]);
    expect(http.code).toBe(2);
    expect(http.stderr).not.toContain(":pw@");
    expect(
      (await idem(["journal", "copy", "--from", t.path, "--to", "postgres://h/db", "--batch", "0"]))
        .code,
    ).toBe(2);
    expect((await idem(["journal", "copy", "--from", t.path])).code).toBe(2);
  });
});
