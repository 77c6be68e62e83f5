import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { foldForPretty, isLogFormat, LOG_FORMATS } from "../src/logger.js";

const RUNTIME_DIR = fileURLToPath(new URL("..", import.meta.url));

/**
 * Logs one line in a child process (the built dist: `npx tsc -b packages/runtime` first) and SIGKILLs
 * it at once, as a fault point does: what reaches stderr was written before the kill.
 */
function logThenKill(
  format: string,
  line = `{ event: "test.line", n: 1 }, "before the kill"`,
): { stderr: string; signal: NodeJS.Signals | null } {
  const script = `
    import { createLogger } from "./dist/index.js";
    const log = createLogger({ name: "idem-test", format: ${JSON.stringify(format)}, level: "info" });
    log.info(${line});
    process.kill(process.pid, "SIGKILL");
  `;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: RUNTIME_DIR,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { stderr: r.stderr, signal: r.signal };
}

describe("createLogger", () => {
  it("knows exactly the formats json and pretty", () => {
    expect(LOG_FORMATS).toEqual(["json", "pretty"]);
    expect(isLogFormat("pretty")).toBe(true);
    expect(isLogFormat("xml")).toBe(false);
    expect(isLogFormat(undefined)).toBe(false);
  });

  it("writes a JSON line synchronously: it is out before a SIGKILL right after", () => {
    const r = logThenKill("json");
    expect(r.signal).toBe("SIGKILL");
    expect(JSON.parse(r.stderr.trim())).toMatchObject({
      name: "idem-test",
      msg: "before the kill",
      event: "test.line",
      n: 1,
    });
  });

  it("writes the pretty form synchronously too, one line with the same message and fields", () => {
    const r = logThenKill("pretty");
    expect(r.signal).toBe("SIGKILL");
    expect(r.stderr).toMatch(
      /^\[[\d:.]+\] INFO \(idem-test\): before the kill \{"event":"test.line","n":1\}\n$/,
    );
  });

  it("leads a pretty line with the job ID, makes an agent's stderr line its message and shortens owner IDs", () => {
    const owner = "vm:21516:3539cde9@72bf406f-aad7-420c-8422-f59612b84160/4026531836/45215";
    const stderr = logThenKill(
      "pretty",
      `{ jobId: "note-1", agent: "writer", delivery: 1, stderr: "working on note-1" }, "agent stderr"`,
    ).stderr;
    expect(stderr).toMatch(/: note-1: writer stderr: working on note-1 \{"delivery":1\}\n$/);
    const claimed = logThenKill("pretty", `{ owner: "${owner}", previousOwner: null }, "claimed"`);
    expect(claimed.stderr).toContain('claimed {"owner":"vm:21516:3539cde9","previousOwner":null}');
    // The JSON form keeps every field as it was.
    expect(
      JSON.parse(logThenKill("json", `{ owner: "${owner}" }, "claimed"`).stderr),
    ).toMatchObject({
      owner,
    });
    expect(foldForPretty("not json")).toBe("not json");
  });

  it("redacts the credentials of every URL a line carries, in a field, an error or the message", () => {
    for (const format of ["json", "pretty"]) {
      const r = logThenKill(
        format,
        `{ url: "nats://user:S3CRET@nats:4222", err: new Error("connect postgres://idem:S3CRET@db/x?password=S3CRET") }, "at https://T0KEN@hooks.example/x"`,
      );
      expect(r.signal).toBe("SIGKILL");
      expect(r.stderr, format).not.toMatch(/S3CRET|T0KEN/);
      expect(r.stderr, format).toContain("nats://***@nats:4222");
      expect(r.stderr, format).toContain("https://***@hooks.example/x");
      if (format === "json") expect(JSON.parse(r.stderr.trim()).err.message).toContain("***@db");
    }
  });
});
