import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { postgresBinDir, startPostgres } from "../src/index.js";

const run = promisify(execFile);
const bin = postgresBinDir() ?? "/usr/lib/postgresql/15/bin";

/** One SQL statement through psql over TCP (the URL the harness gives), its single value. */
async function query(url: string, sql: string): Promise<string> {
  const { stdout } = await run(join(bin, "psql"), ["-X", "-At", "-d", url, "-c", sql]);
  return stdout.trim();
}

describe("startPostgres", () => {
  it("starts its own cluster on a free port with fsync on, isolates databases, survives a SIGKILL and restart", async () => {
    await using pg = await startPostgres();
    expect(pg.port).not.toBe(5432);
    expect(await query(pg.url, "SHOW fsync")).toBe("on");
    expect(await query(pg.url, "SHOW synchronous_commit")).toBe("on");
    expect(await query(pg.url, "SHOW data_directory")).toBe(pg.dataDir);

    const a = await pg.createDatabase("harness_a");
    const b = await pg.createDatabase("harness_b");
    await query(a, "CREATE TABLE t (v int); INSERT INTO t VALUES (42)");
    expect(await query(a, "SELECT v FROM t")).toBe("42");
    expect(await query(b, "SELECT count(*) FROM pg_tables WHERE tablename = 't'")).toBe("0");

    const firstPid = pg.pid;
    await pg.kill();
    await expect(query(a, "SELECT 1")).rejects.toThrow();
    await pg.restart();
    expect(pg.pid).not.toBe(firstPid);
    // Committed before the SIGKILL, so recovered from the WAL.
    expect(await query(a, "SELECT v FROM t")).toBe("42");

    const dir = pg.dataDir;
    await pg.stop();
    expect(existsSync(dir)).toBe(false);
    await pg.stop();
  });
});
