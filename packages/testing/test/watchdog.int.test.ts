// The harnesses' watchdog: a test process SIGKILLed (no exit hook runs) leaves no server behind.
// A child starts a git daemon through the built harness and is SIGKILLed; the daemon, found by its
// PID, is killed by the watchdog and its folder removed.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const DIST = join(import.meta.dirname, "../dist/index.js");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether something accepts connections on 127.0.0.1:port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

describe("a harness's server outliving its test process", () => {
  it("is SIGKILLed by the watchdog and its folder removed once the process is gone", async () => {
    const script = `const { startGitDaemon } = await import(${JSON.stringify(DIST)});
      const d = await startGitDaemon();
      process.stdout.write(JSON.stringify({ pid: d.pid, dir: d.baseDir, port: d.port }) + "\\n");
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("\n")) resolve(out.trim());
      });
      child.once("exit", (code) => reject(new Error(`the child exited (${code}): ${out}`)));
    });
    const { pid, dir, port } = JSON.parse(line) as { pid: number; dir: string; port: number };
    expect(alive(pid)).toBe(true);
    expect(existsSync(dir)).toBe(true);
    expect(await listening(port)).toBe(true);
    child.kill("SIGKILL");
    for (let i = 0; i < 600 && (alive(pid) || existsSync(dir)); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    // What matters: no server is left on the port (not only the process the harness knew).
    expect(await listening(port)).toBe(false);
  }, 120_000);
});
