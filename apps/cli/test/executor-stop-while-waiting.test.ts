// `idem executor` started while NATS is unreachable waits for it; the first SIGTERM (or SIGINT)
// meanwhile ends it with exit 0, as docs/cli.md says (issue 31, finding 15: it took a second one).
import { spawn } from "node:child_process";
import { freePort } from "@idem/testing";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace | undefined;
afterEach(() => {
  ws?.remove();
  ws = undefined;
});

describe("idem executor waiting for NATS at start", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`exits 0 on the first ${signal}`, async () => {
      // A port nothing listens on: every connect is refused, and the executor waits.
      const port = await freePort();
      ws = workspace({
        agents: { writer: { command: [process.execPath, "-e", "process.exit(0)"] } },
        nats: { url: `nats://127.0.0.1:${port}` },
      });
      const child = spawn(
        process.execPath,
        [IDEM_BIN, "executor", "--no-api", "--config", ws.config],
        {
          env: cleanEnv({ IDEM_LOG_LEVEL: "info" }),
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      let stderr = "";
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
        child.once("exit", (code, sig) => r({ code, signal: sig })),
      );
      const waiting = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`never said it waits:\n${stderr}`)),
          60_000,
        );
        child.stderr.on("data", (d: Buffer) => {
          stderr += d.toString();
          if (stderr.includes("NATS is not reachable yet")) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      try {
        await waiting;
        child.kill(signal);
        // Bounded generously: a second signal is never sent, so a hang fails here, not later.
        const ended = await Promise.race([
          exited,
          new Promise<"hung">((r) => setTimeout(() => r("hung"), 60_000)),
        ]);
        expect(ended, stderr).toEqual({ code: 0, signal: null });
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await exited;
      }
    }, 180_000);
  }
});
