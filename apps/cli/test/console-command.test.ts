import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN, idem, type Workspace, workspace } from "./ops-helpers.js";

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
    ws = workspace({}, { journal: false });
    const r = await idem(["console", "--host", "0.0.0.0", "--port", "0", "--config", ws.config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("api.token");
    expect(r.stderr).toContain("--host");
    expect(readdirSync(ws.dir)).toEqual(["idem.config.json"]);
  });

  it("offers the OS user as the actor when $USER and $IDEM_ACTOR are unset, not 'cli'", async () => {
    ws = workspace({ journal: { path: "journal.db" } });
    const journal = await openSqliteJournal(join(ws.dir, "journal.db"));
    await journal.jobs.enqueue({ jobId: "j-1", agent: "writer", input: {} });
    const claimed = await journal.jobs.claimNext({ owner: "x", leaseMs: 60_000 });
    if (!claimed) throw new Error("nothing claimed");
    await journal.deadLetters.add(
      "j-1",
      { class: "transient", error: "boom", deliveries: 3 },
      claimed.lease,
    );
    await journal.close();
    const env = cleanEnv();
    delete env.USER;
    delete env.IDEM_ACTOR;
    const child = spawn(
      process.execPath,
      [IDEM_BIN, "console", "--port", "0", "--config", ws.config],
      {
        env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const exited = new Promise((r) => child.once("close", r));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        const timer = setTimeout(() => reject(new Error(`no URL: ${out}`)), 60_000);
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /idem console: (http:\/\/\S+)/.exec(out);
          if (m?.[1]) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      });
      const page = await (await fetch(`${url}/dead-letters`)).text();
      const actor = /name="actor" value="([^"]*)"/.exec(page)?.[1];
      expect(actor).toBe(`${userInfo().username} (console)`);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});
