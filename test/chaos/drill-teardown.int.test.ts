// Issue 42, item 9: a drill leaves no process, namespace or bridge behind however it ends. The
// verdict is checked by the CI-sized drills themselves (hosts-drill.int, cluster-drill.int); here
// tiny drills are stopped by SIGINT, by SIGTERM and by an abandon (their own timeout), and nothing
// of them may remain: no process carrying the run's mark (executors, interpreters, agents, servers
// and their watchdogs), and for the cluster drill none of its network namespaces nor its bridge.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { skipUnless } from "../support/skip.js";
import { drillLeftovers, drillTraces } from "./drill-leftovers.js";
import { buildForTest, REPO_ROOT } from "./interpreter-fixture.js";

const root = process.getuid?.() === 0;

/** Runs a drill; once its stderr matches `when`, sends `signal`. Answers its exit and its log. */
function runDrill(
  script: string,
  args: string[],
  stop?: { when: RegExp; signal: NodeJS.Signals },
): Promise<{ code: number | null; stderr: string }> {
  const env = { ...process.env };
  for (const k of ["IDEM_FAULT", "IDEM_JOURNAL_URL", "NATS_URL"]) delete env[k];
  const child = spawn(process.execPath, [join(REPO_ROOT, "test/chaos", script), ...args], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let sent = false;
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    if (stop && !sent && stop.when.test(stderr)) {
      sent = true;
      child.kill(stop.signal);
    }
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stderr })));
}

describe("a drill that is stopped before its verdict", () => {
  it("leaves nothing behind on SIGINT (the hosts drill, mid-run)", async () => {
    buildForTest("apps/cli", "packages/testing");
    const r = await runDrill("hosts-drill.mjs", ["--jobs", "40", "--kills", "4"], {
      when: /outputs \d+\/40/,
      signal: "SIGINT",
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(2);
    expect(r.stderr).toContain("SIGINT: stopping");
    expect(await drillLeftovers(drillTraces(r.stderr))).toEqual([]);
  }, 300_000);

  it("leaves nothing behind when it abandons (the hosts drill past its own timeout)", async () => {
    buildForTest("apps/cli", "packages/testing");
    const r = await runDrill("hosts-drill.mjs", [
      "--jobs",
      "400",
      "--kills",
      "4",
      "--timeout-s",
      "4",
    ]);
    expect(r.code, r.stderr.slice(-2000)).toBe(2);
    expect(r.stderr).toContain("the drill timed out");
    expect(await drillLeftovers(drillTraces(r.stderr))).toEqual([]);
  }, 300_000);

  it("leaves no process, namespace or bridge behind on SIGTERM (the cluster drill, mid-run)", {
    ...skipUnless(root, "needs root: network namespaces"),
    timeout: 400_000,
  }, async () => {
    buildForTest("apps/cli", "packages/testing");
    const r = await runDrill(
      "cluster-drill.mjs",
      ["--jobs", "30", "--kills", "2", "--nats-kills", "0", "--pg-restarts", "0"],
      { when: /outputs \d+\/30/, signal: "SIGTERM" },
    );
    expect(r.code, r.stderr.slice(-2000)).toBe(2);
    const traces = drillTraces(r.stderr);
    expect(traces.namespaces).toHaveLength(3);
    expect(await drillLeftovers(traces)).toEqual([]);
  });
});
