// Three hosts, one journal (issue 18), CI-sized: the drill of hosts-drill.mjs with 120 jobs and 12
// SIGKILLs on a disposable PostgreSQL; the full 500-job drill is `npm run drill:hosts`.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { drillLeftovers, drillTraces } from "./drill-leftovers.js";
import { buildForTest, REPO_ROOT } from "./interpreter-fixture.js";

const run = promisify(execFile);

interface Row {
  name: string;
  value: string | number;
  ok: boolean;
}

describe("three hosts sharing one PostgreSQL journal and queue", () => {
  it("runs 120 jobs under 12 SIGKILLs: one output each, no late agent run, every effect once, every run done", async () => {
    // The drill drives the built CLI and packages.
    buildForTest("apps/cli", "packages/testing");
    const env = { ...process.env };
    for (const k of ["IDEM_FAULT", "IDEM_JOURNAL_URL", "NATS_URL"]) delete env[k];
    let stdout: string;
    let stderr = "";
    try {
      ({ stdout, stderr } = await run(
        process.execPath,
        [
          join(REPO_ROOT, "test/chaos/hosts-drill.mjs"),
          "--jobs",
          "120",
          "--kills",
          "12",
          "--json",
          "--timeout-s",
          "280",
        ],
        { env, maxBuffer: 1 << 24 },
      ));
    } catch (e) {
      // Exit 1 is a violation (the JSON says which); exit 2 a drill that could not finish.
      const err = e as { code: number; stdout: string; stderr: string };
      if (err.code !== 1) throw new Error(`the drill failed (exit ${err.code}):\n${err.stderr}`);
      ({ stdout, stderr } = err);
    }
    // Exit 1 is also how Node ends on an error nobody caught: then there is no report, and the
    // drill's own log says what happened.
    if (!stdout.trim().startsWith("{")) throw new Error(`the drill printed no report:\n${stderr}`);
    const report = JSON.parse(stdout) as { seed: number; table: Row[]; violations: string[] };
    const value = (name: string) => report.table.find((r) => r.name === name)?.value;
    expect(report.violations, `seed ${report.seed}\n${stderr}`).toEqual([]);
    expect(value("outputs recorded (one per job)")).toBe(120);
    expect(value("agent runs after the output was recorded")).toBe(0);
    expect(value("http requests received")).toBe(120);
    expect(value("duplicate effects at targets")).toBe(0);
    expect(value("missing effects at targets")).toBe(0);
    expect(value("runs done")).toBe(120);
    // The verdict's teardown left nothing of the drill running (issue 42, item 9).
    expect(await drillLeftovers(drillTraces(stderr))).toEqual([]);
    // The queue is shared, not taken by one host: more than one host ran agents. (Not every host:
    // on a busy machine a host the drill kills again and again can lose every claim; CI saw it.)
    const perHost = String(value("agent runs per host")).split(" / ").map(Number);
    expect(perHost).toHaveLength(3);
    expect(
      perHost.filter((n) => n > 0).length,
      `seed ${report.seed}: ${perHost.join(" / ")}`,
    ).toBeGreaterThanOrEqual(2);
  }, 330_000);
});
