import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { classifyError, isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { skipUnless } from "../support/skip.js";

/** Mounts a size-limited tmpfs; undefined where this machine does not allow it (not root). */
function mountSmallFs(
  sizeKb: number,
): { dir: string; grow(kb: number): void; unmount(): void } | undefined {
  const dir = mkdtempSync(join(tmpdir(), "idem-small-fs-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k`, "tmpfs", dir], {
      stdio: "pipe",
    });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return {
    dir,
    grow: (kb) => execFileSync("mount", ["-o", `remount,size=${kb}k`, dir]),
    unmount: () => {
      execFileSync("umount", ["-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const fs = mountSmallFs(1);
if (fs) fs.unmount();

describe("the journal under resource faults", () => {
  it(
    "fails records on a full filesystem cleanly with an infrastructure error, leaves no partial rows, and goes on once space returns",
    skipUnless(fs !== undefined, "needs root: mounts a small tmpfs"),
    async () => {
      const small = mountSmallFs(600);
      if (!small) throw new Error("mount");
      try {
        const journal = await openSqliteJournal(join(small.dir, "journal.db"), {
          synchronous: "FULL",
        });
        const body = "x".repeat(8000);
        const out = (i: number) => ({ jobId: `job-${i}`, agent: "w", summary: body, effects: [] });
        let full: unknown;
        let i = 0;
        for (; i < 1000; i++) {
          try {
            await journal.outputs.record(out(i), { source: "test", targets: [`root:${i % 2}`] });
          } catch (e) {
            full = e;
            break;
          }
        }
        expect(full, "the filesystem never filled").toBeDefined();
        expect(i).toBeGreaterThan(5);
        // The adapter's boundary answers idem's code, SQLite's error its cause.
        expect(isIdemError(full, "DISK_FULL")).toBe(true);
        expect((full as { cause?: { code?: string } }).cause?.code).toMatch(/^SQLITE_FULL/);
        expect(classifyError(full)).toBe("infrastructure");
        const counts = () =>
          journal.database
            .prepare(
              "SELECT (SELECT COUNT(*) FROM outputs) o, (SELECT COUNT(*) FROM runs) r, (SELECT COUNT(*) FROM events WHERE type = 'output.recorded') e",
            )
            .get() as { o: number; r: number; e: number };
        const afterFull = counts();
        expect(afterFull).toEqual({ o: i, r: i, e: i });
        expect(await journal.outputs.has(`job-${i}`)).toBe(false);
        small.grow(8192);
        const retried = await journal.outputs.record(out(i), {
          source: "test",
          targets: ["root:0"],
        });
        expect(retried.status).toBe("recorded");
        expect(
          (await journal.outputs.record(out(i), { source: "test", targets: ["root:0"] })).status,
        ).toBe("duplicate");
        expect(counts()).toEqual({ o: i + 1, r: i + 1, e: i + 1 });
        expect(await journal.maintenance.integrity()).toEqual([]);
        await journal.close();
      } finally {
        small.unmount();
      }
    },
  );

  it("waits for a journal locked by another process, and reports a longer lock as a transient error with nothing written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-locked-"));
    const path = join(dir, "journal.db");
    const hold = async (ms: number) => {
      const child = spawn(
        process.execPath,
        [
          "-e",
          `const D=require(${JSON.stringify(createRequire(import.meta.url).resolve("better-sqlite3"))});const d=new D(process.argv[1]);d.exec("BEGIN EXCLUSIVE");process.stdout.write("held");setTimeout(()=>{d.exec("COMMIT");d.close()},${ms});`,
          path,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
      // Wrapped in an object: an async function returning a bare promise would be awaited through.
      return { exited: new Promise<void>((resolve) => child.once("exit", () => resolve())) };
    };
    try {
      await (await openSqliteJournal(path)).close();
      const patient = await openSqliteJournal(path, { busyTimeoutMs: 10_000 });
      const released = await hold(1000);
      const r = await patient.outputs.record(
        { jobId: "a", agent: "w", effects: [] },
        { source: "test", targets: [] },
      );
      expect(r.status).toBe("recorded");
      await released.exited;
      const hasty = await openSqliteJournal(path, { busyTimeoutMs: 100 });
      const releasedAgain = await hold(1500);
      const err = await hasty.outputs
        .record({ jobId: "b", agent: "w", effects: [] }, { source: "test", targets: [] })
        .catch((e) => e);
      expect(isIdemError(err, "LOCKED")).toBe(true);
      expect((err as { cause?: { code?: string } }).cause?.code).toMatch(/^SQLITE_BUSY/);
      expect(classifyError(err)).toBe("transient");
      await releasedAgain.exited;
      expect(await hasty.outputs.has("b")).toBe(false);
      expect(
        (
          await hasty.outputs.record(
            { jobId: "b", agent: "w", effects: [] },
            { source: "test", targets: [] },
          )
        ).status,
      ).toBe("recorded");
      await patient.close();
      await hasty.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
