// What must be durable before the apply is: a real interpreter process, SIGKILLed by IDEM_FAULT
// right after an intent (interpreter.after-intent), run under strace. The intent's commit to the
// WAL must be followed by a completed fdatasync of the WAL before the process dies: a power loss at
// that instant must still find the intent, since the apply that follows would otherwise leave a
// change at the target that no ledger row announces. (Settles of probed effects and completions
// are durable "soon": docs/reliability.md, "What is durable when".) The PostgreSQL counterpart,
// which kills the server instead, is postgres-durable-intent.int.test.ts.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FAULT_POINTS } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { runs, skipUnless } from "../support/skip.js";
import {
  CHILD_SCRIPT,
  chainOutputs,
  createWorkspace,
  openWorkspaceJournal,
  REPO_ROOT,
  recordAll,
} from "./interpreter-fixture.js";

const hasStrace = runs("strace", "-V");

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "apps/interpreter"], { cwd: REPO_ROOT, stdio: "ignore" });
});

/**
 * From an `strace -f -y` log: is the last write to the WAL before the process's SIGKILL followed
 * by an fdatasync of the WAL that began after it and ended before the kill?
 */
function walSyncedBeforeKill(log: string): { synced: boolean; walWrites: number } {
  const lines = log.split("\n");
  let lastWrite = -1;
  let walWrites = 0;
  /** Per thread: where its fdatasync of the WAL began, while it runs. */
  const open = new Map<string, number>();
  let syncedAfter = -1;
  for (const [i, line] of lines.entries()) {
    const pid = line.split(" ", 1)[0] ?? "";
    if (/\bkill\(\d+, SIGKILL/.test(line)) break;
    if (/pwrite64\(\d+<[^>]*-wal>/.test(line)) {
      lastWrite = i;
      walWrites += 1;
    } else if (/fdatasync\(\d+<[^>]*-wal>/.test(line)) {
      if (/\) = 0$/.test(line)) syncedAfter = Math.max(syncedAfter, i);
      else open.set(pid, i);
    } else if (/<\.\.\. fdatasync resumed>\) += 0$/.test(line) && open.has(pid)) {
      const began = open.get(pid) as number;
      open.delete(pid);
      if (began > lastWrite) syncedAfter = Math.max(syncedAfter, began);
    }
    // A one-line fdatasync counts from where it is (it began and ended there).
  }
  return { synced: lastWrite >= 0 && syncedAfter > lastWrite, walWrites };
}

describe("the intent is durable before the apply (SQLite, synchronous FULL)", () => {
  it("has fsynced the WAL after the intent's commit when a SIGKILL at interpreter.after-intent comes, and the reopened ledger holds the intent", {
    timeout: 120_000,
    ...skipUnless(hasStrace, "needs strace: the interpreter's fsyncs are read off it"),
  }, async () => {
    await using dir = await tempDir("idem-durable-intent-");
    // Nothing else writes between the intent's commit and the kill, so the last WAL write the
    // trace shows is the intent's: one run at a time (a follower's claim is a WAL write with no
    // fsync of its own) and a lease no renewal of which falls inside the test.
    const ws = await createWorkspace(dir.path, { leaseMs: 60_000, pipeline: 1 });
    const outputs = chainOutputs("intent", 3);
    const journal = await openWorkspaceJournal(ws);
    await recordAll(journal, ws.config, outputs);
    await journal.close();
    const log = join(dir.path, "strace.log");
    const child = spawn(
      "strace",
      ["-f", "-qq", "-y", "-e", "trace=pwrite64,fdatasync,kill", "-o", log].concat([
        process.execPath,
        CHILD_SCRIPT,
        ws.configFile,
      ]),
      {
        env: {
          ...process.env,
          IDEM_LOG_LEVEL: "warn",
          IDEM_FAULT: `${FAULT_POINTS.INTERPRETER_AFTER_INTENT}:2`,
        },
        stdio: "ignore",
      },
    );
    const exit = await new Promise<{ code: number | null; signal: string | null }>((res) =>
      child.on("exit", (code, signal) => res({ code, signal })),
    );
    // strace dies of its child's signal: SIGKILL, or exit code 137 where it cannot.
    expect(exit.signal === "SIGKILL" || exit.code === 137, JSON.stringify(exit)).toBe(true);
    const traced = walSyncedBeforeKill(readFileSync(log, "utf8"));
    expect(traced.walWrites).toBeGreaterThan(0);
    expect(traced.synced, "the WAL was not fsynced after the intent's commit").toBe(true);
    const reopened = await openWorkspaceJournal(ws);
    try {
      const second = outputs[1]?.jobId ?? "";
      expect((await reopened.ledger.forJob(second)).map((r) => r.state)).toEqual(["intended"]);
      expect((await reopened.ledger.forJob(outputs[0]?.jobId ?? "")).map((r) => r.state)).toEqual([
        "applied",
      ]);
    } finally {
      await reopened.close();
    }
  });
});
