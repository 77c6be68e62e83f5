import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildForTest, CLEAN, isStopped, verify, waitFor } from "../chaos/interpreter-fixture.js";
import { commits, type Incident, incident } from "./incident.js";
import { shell, typed } from "./runbook.js";

// docs/runbook.md, "A hung process": a process frozen (SIGSTOP) while it holds a repository's lock
// or the journal's write lock is named by `idem status` and `idem doctor` (pid, state), the reading
// commands keep working, doctor never calls it damage, and the documented `kill -9 PID` lets the
// next holder finish every effect once.

const SECTION = "A hung process";
let fx: Incident | undefined;
beforeAll(() => buildForTest("apps/cli"));
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const betterSqlite = createRequire(import.meta.url).resolve("better-sqlite3");

describe("a hung process, the runbook's way", () => {
  it("names an interpreter frozen holding a repository's lock, and kill -9 PID lets the next one apply every effect once", async () => {
    fx = await incident({ leaseMs: 2000 });
    const outputs = ["hung-1", "hung-2", "hung-3"].map((id) => commits(id));
    await fx.record(outputs);
    // Frozen right after its first commit, with the repository's lock still held (it lingers).
    const frozen = fx.start(["interpreter"], { IDEM_PAUSE: "interpreter.after-apply:1" });
    await waitFor("the interpreter to freeze", () => isStopped(frozen.pid));
    const next = fx.start(["interpreter"]);

    const cwd = fx.dir;
    const status = await shell(typed(SECTION, /^idem status\b/), { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain("held past its time");
    expect(status.stdout).toMatch(new RegExp(`repo site's lock\\s*│\\s*pid ${frozen.pid}\\b`));
    expect(status.stdout).toContain("stopped");
    const doctor = await shell(typed(SECTION, /^idem doctor\b/), { cwd });
    expect(doctor.code, doctor.stdout).toBe(1);
    expect(doctor.stdout).toMatch(new RegExp(`repos\\.site .*pid ${frozen.pid}\\b`, "s"));
    expect(doctor.stdout).not.toMatch(/backup/i);
    // Nothing moves while it is frozen: the next interpreter waits for the lock.
    const j = await fx.journal();
    expect((await j.runs.latest("hung-3"))?.state).not.toBe("done");

    const kill = await shell(typed(SECTION, /^kill -9 PID/), {
      cwd,
      vars: { PID: String(frozen.pid) },
    });
    expect(kill.code, kill.stderr).toBe(0);
    await frozen.exited;
    await waitFor(
      "the next interpreter to finish every run",
      async () => {
        for (const o of outputs) if ((await j.runs.latest(o.jobId))?.state !== "done") return false;
        return true;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    expect(await verify(fx.ws, j, outputs)).toEqual(CLEAN);
    const after = await shell(typed(SECTION, /^idem status\b/), { cwd });
    expect(after.stdout).not.toContain("held past its time");
    const audit = await shell(typed(SECTION, /^idem audit\b/), { cwd });
    expect(audit.code, audit.stdout).toBe(0);
    await next.kill();
  });

  it("keeps the reading commands working while a frozen process holds the journal's write lock, and doctor names it, never damage", async () => {
    fx = await incident();
    await fx.record([commits("locked-1")]);
    const cwd = fx.dir;
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const db = new (require(${JSON.stringify(betterSqlite)}))(${JSON.stringify(fx.ws.config.journal.path)}, { timeout: 120000 });
         db.exec("BEGIN IMMEDIATE");
         db.prepare("INSERT INTO events (at, job_id, type, data, actor) VALUES (0, NULL, 'note', '{}', 'holder')").run();
         process.stdout.write("held\\n");
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      // Waits out a busy machine's writers for the lock; a holder that died instead fails the test.
      await new Promise<void>((resolve, reject) => {
        holder.stdout?.once("data", () => resolve());
        holder.once("exit", (code) => reject(new Error(`the lock holder exited (${code})`)));
      });
      holder.kill("SIGSTOP");
      const pid = holder.pid as number;
      await waitFor("the holder to stop", () => isStopped(pid));

      for (const command of [
        typed("First look", /^idem status\b/),
        typed("First look", /^idem dlq ls\b/),
        typed("First look", /^idem ls --state dead\b/),
        typed("First look", /^idem show JOB\b/),
      ]) {
        const r = await shell(command, { cwd, vars: { JOB: "locked-1" } });
        expect(r.code, `${command}: ${r.stderr}`).toBe(0);
        expect(r.stderr).not.toMatch(/locked/i);
      }
      const status = await shell(typed(SECTION, /^idem status\b/), { cwd });
      expect(status.stdout).toMatch(new RegExp(`the journal's write lock\\s*│\\s*pid ${pid}\\b`));
      const doctor = await shell(typed(SECTION, /^idem doctor\b/), { cwd });
      expect(doctor.code, doctor.stdout).toBe(1);
      expect(doctor.stdout).toMatch(new RegExp(`unavailable.*pid ${pid}\\b.*stopped`, "s"));
      expect(doctor.stdout).not.toMatch(/backup/i);

      const kill = await shell(typed(SECTION, /^kill -9 PID/), { cwd, vars: { PID: String(pid) } });
      expect(kill.code).toBe(0);
      // It may have exited before this line runs: its exit event is then past.
      if (holder.exitCode === null && holder.signalCode === null)
        await new Promise((r) => holder.once("exit", r));
      const healthy = await shell(typed(SECTION, /^idem doctor\b/), { cwd });
      expect(healthy.code, healthy.stdout).toBe(0);
      const once = fx.start(["interpreter", "--once"]);
      expect(await once.exited).toBe(0);
      expect(await verify(fx.ws, await fx.journal(), [commits("locked-1")])).toEqual(CLEAN);
    } finally {
      holder.kill("SIGCONT");
      holder.kill("SIGKILL");
    }
  });
});
