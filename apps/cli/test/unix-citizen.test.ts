import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN, idem, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace | undefined;

/** A config the executor starts with (it needs an agent to run). */
const WITH_AGENT = { agents: { writer: { command: ["node", "-e", "0"] } } };
afterEach(() => {
  ws?.remove();
  ws = undefined;
});

/** A workspace with one recorded output, so listings have rows. */
async function recordedWorkspace(): Promise<Workspace> {
  const w = workspace({ roots: { outbox: { path: "outbox" } } });
  const file = join(w.dir, "out.json");
  writeFileSync(
    file,
    JSON.stringify({
      jobId: "pipe-1",
      agent: "writer",
      effects: [{ kind: "file.write", root: "outbox", path: "a.txt", content: "a\n" }],
    }),
  );
  const r = await idem(["submit", file, "--config", w.config]);
  expect(r.code, r.stderr).toBe(0);
  return w;
}

/**
 * Runs idem with its stdout a pipe whose reading end is already closed, as `idem ... | head -0`
 * leaves it by the time idem writes: every write meets EPIPE, whatever the machine's speed.
 */
function idemIntoClosedPipe(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [IDEM_BIN, ...args], {
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/** Runs a long-running idem command until `ready` shows in its stderr, then sends `signal`. */
function idemUntil(
  args: string[],
  ready: RegExp,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [IDEM_BIN, ...args], {
      env: cleanEnv({ IDEM_LOG_LEVEL: "info" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let sent = false;
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (!sent && ready.test(stderr)) {
        sent = true;
        child.kill(signal);
      }
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("idem as a Unix citizen", () => {
  it("ends quietly with exit 0 when the reader of its output has gone (ls, ls --json, show)", async () => {
    ws = await recordedWorkspace();
    for (const args of [["ls"], ["ls", "--json"], ["show", "pipe-1"], ["status", "--json"]]) {
      const r = await idemIntoClosedPipe([...args, "--config", ws.config]);
      expect(r.stderr, args.join(" ")).not.toMatch(/EPIPE|Error|at /);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
  });

  it("logs one JSON object per line with --log-format json, the same messages and fields", async () => {
    ws = workspace();
    const r = await idemUntil(
      ["interpreter", "--log-format", "json", "--config", ws.config],
      /interpreter started/,
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trim().split("\n");
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries[0]).toMatchObject({
      name: "idem-interpreter",
      msg: "interpreter started",
      event: "interpreter.started",
      concurrency: 1,
    });
    expect(entries.map((e) => e.msg)).toContain("interpreter stopped");
  });

  it("logs human-readable lines with --log-format pretty: level, name, message and fields on one line", async () => {
    ws = workspace();
    const r = await idemUntil(
      ["interpreter", "--log-format", "pretty", "--config", ws.config],
      /interpreter started/,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/^\{/m);
    expect(r.stderr).toMatch(
      /^\[[\d:.]+\] INFO \(idem-interpreter\): interpreter started \{.*"event":"interpreter.started".*\}$/m,
    );
  });

  it("logs human-readable lines on a terminal by default", async () => {
    ws = workspace(WITH_AGENT);
    // script(1) gives the process a pseudo-terminal; the test needs only that the form is pretty.
    const r = await new Promise<{ out: string }>((resolve, reject) => {
      const command = `${process.execPath} ${IDEM_BIN} executor --no-api --config ${ws?.config}`;
      const child = spawn("script", ["-qefc", command, "/dev/null"], {
        env: cleanEnv({ IDEM_LOG_LEVEL: "info" }),
        stdio: ["pipe", "pipe", "pipe"],
      });
      let out = "";
      let sent = false;
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (!sent && /executor started/.test(out)) {
          sent = true;
          // Ctrl-C on the terminal.
          child.stdin.write("\x03");
        }
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      child.on("error", reject);
      child.on("close", () => {
        clearTimeout(timer);
        resolve({ out });
      });
    });
    expect(r.out).toMatch(/INFO.*\(idem-executor\).*executor started/);
    expect(r.out).not.toMatch(/"msg":/);
  });

  it("refuses a --log-format it does not know, naming the option (exit 2)", async () => {
    ws = workspace();
    for (const command of ["executor", "interpreter", "up"]) {
      const r = await idem([command, "--log-format", "xml", "--config", ws.config]);
      expect(r.code, command).toBe(2);
      expect(r.stderr).toMatch(/--log-format.*xml/);
    }
  });

  it("says that it stops once when signalled twice (SIGINT, then SIGTERM as from idem up)", async () => {
    ws = workspace(WITH_AGENT);
    const commands = [
      {
        args: ["interpreter"],
        started: /interpreter started/,
        stopped: /"msg":"interpreter stopped"/g,
      },
      {
        args: ["executor", "--port", "0"],
        started: /executor started/,
        stopped: /"msg":"executor stopped"/g,
      },
    ];
    for (const { args, started, stopped } of commands) {
      const child = spawn(
        process.execPath,
        [IDEM_BIN, ...args, "--log-format", "json", "--config", ws.config],
        { env: cleanEnv({ IDEM_LOG_LEVEL: "info" }), stdio: ["ignore", "pipe", "pipe"] },
      );
      let err = "";
      let sent = false;
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
        if (!sent && started.test(err)) {
          sent = true;
          child.kill("SIGINT");
          child.kill("SIGTERM");
        }
      });
      const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
      expect(code, err).toBe(0);
      expect(err.match(stopped)?.length, err).toBe(1);
    }
  });
});
