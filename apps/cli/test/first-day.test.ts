// The first day (issue 36): right after `idem init` doctor says no agent is configured, `idem up`
// runs the executor for agents elsewhere (the submit API) and the interpreter instead of exiting
// 2, and `idem replay --job` of a job with no output says so instead of planning nothing.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN, idem } from "./ops-helpers.js";

let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "idem-first-day-"));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the first day after idem init", () => {
  it("doctor says no agent is configured, and idem up serves the submit API and applies what agents elsewhere submit", async () => {
    expect((await idem(["init"], { cwd })).code).toBe(0);
    const doctor = await idem(["doctor", "--json"], { cwd });
    expect(doctor.code, doctor.stderr).toBe(0);
    const report = JSON.parse(doctor.stdout) as { findings: { key: string; finding: string }[] };
    expect(report.findings.find((f) => f.key === "agents")?.finding).toMatch(
      /no agents configured.*submit API/,
    );
    const file = join(cwd, "idem.config.json");
    const config = JSON.parse(readFileSync(file, "utf8")) as {
      api: { port: number; token: string };
    };
    config.api.port = 0;
    writeFileSync(file, JSON.stringify(config));

    const up = spawn(process.execPath, [IDEM_BIN, "up"], {
      cwd,
      env: cleanEnv({ IDEM_LOG_LEVEL: "info" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    up.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    up.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => up.on("close", (code) => r(code)));
    try {
      await until("the API", () => /"url":"(http:\/\/[^"]+)"/.test(out));
      expect(out).toContain("up no agents configured");
      expect(out).toContain("executor started without agents");
      const url = /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1];
      const res = await fetch(`${url}/v1/outputs`, {
        method: "POST",
        // idem init wrote a token: the submit API asks for it.
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${config.api.token}`,
        },
        body: JSON.stringify({ jobId: "elsewhere-1", agent: "remote", effects: [] }),
      });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      await until("the run done", async () => {
        const s = await idem(["status", "--json"], { cwd });
        return (JSON.parse(s.stdout) as { runs: { done: number } }).runs.done === 1;
      });
    } finally {
      up.kill("SIGTERM");
    }
    expect(await exited, out).toBe(0);
  });

  it("idem replay --job of a job with no output exits 1 naming it, dry run or not", async () => {
    expect((await idem(["init"], { cwd })).code).toBe(0);
    const dry = await idem(["replay", "--job", "nosuchjob", "--dry-run"], { cwd });
    expect(dry.code).toBe(1);
    expect(dry.stderr).toContain("nosuchjob");
    const real = await idem(["replay", "--job", "nosuchjob", "--yes", "--reason", "x"], { cwd });
    expect(real.code).toBe(1);
    expect(real.stderr).toContain("nosuchjob");
  });
});
