import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace | undefined;
afterEach(() => {
  ws?.remove();
  ws = undefined;
});

describe("idem console", () => {
  it("refuses a bad --port and a missing config with exit 2, creating nothing", async () => {
    ws = workspace({});
    const bad = await idem(["console", "--port", "http", "--config", ws.config]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--port must be an integer");
    const empty = mkdtempSync(join(tmpdir(), "idem-console-none-"));
    try {
      const none = await idem(["console"], { cwd: empty });
      expect(none.code).toBe(2);
      expect(none.stderr).toContain("no config");
      expect(readdirSync(empty)).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("fails with exit 1 naming the address when its port is taken", async () => {
    ws = workspace({});
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await idem(["console", "--port", String(port), "--config", ws.config]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("EADDRINUSE");
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it("refuses --host 0.0.0.0 without api.token with exit 2, naming api.token and --host, before opening anything", async () => {
    ws = workspace({});
    const r = await idem(["console", "--host", "0.0.0.0", "--port", "0", "--config", ws.config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("api.token");
    expect(r.stderr).toContain("--host");
    expect(readdirSync(ws.dir)).toEqual(["idem.config.json"]);
  });
});
