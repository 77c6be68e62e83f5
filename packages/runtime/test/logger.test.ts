import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isLogFormat, LOG_FORMATS } from "../src/logger.js";

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

  it("writes the pretty form synchronously too, with the same message and fields", () => {
    const r = logThenKill("pretty");
    expect(r.signal).toBe("SIGKILL");
    expect(r.stderr).toMatch(/^\[[\d:.]+\] INFO \(idem-test\): before the kill$/m);
    expect(r.stderr).toMatch(/^ {4}event: "test.line"$/m);
    expect(r.stderr).toMatch(/^ {4}n: 1$/m);
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
