// Credentials in URLs (docs/security.md, Credentials), with the built CLI: a URL where they can
// never work is refused at load naming the key and not the secret; where they work (a NATS
// publish target), a failure to reach it is stored and shown without them.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace | undefined;
afterEach(() => {
  ws?.remove();
  ws = undefined;
});

describe("credentials in config URLs", () => {
  it("refuses an http target's baseUrl or probeUrl and an alert webhook with credentials, naming the key, never the secret", async () => {
    ws = workspace({
      http: {
        targets: {
          hooks: {
            baseUrl: "https://svc:Hunter2@hooks.example",
            probeUrl: "https://tok3n@hooks.example/probe/{key}",
          },
        },
      },
      alerts: { webhook: "https://alert:Hunter2@alerts.example/hook" },
    });
    const r = await idem(["status", "--config", ws.config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("http.targets.hooks.baseUrl");
    expect(r.stderr).toContain("http.targets.hooks.probeUrl");
    expect(r.stderr).toContain("alerts.webhook");
    expect(r.stderr + r.stdout).not.toMatch(/Hunter2|tok3n/);
  });

  it("stores and shows a failed publish to a NATS URL with credentials without them", async () => {
    ws = workspace({
      publish: {
        events: { subjectPrefix: "ev", stream: "EV", url: "nats://idem:Hunter2@127.0.0.1:1" },
      },
      interpreter: { maxAttempts: 1, pollMs: 20 },
    });
    const cfg = ["--config", ws.config];
    const file = join(ws.dir, "output.json");
    writeFileSync(
      file,
      JSON.stringify({
        jobId: "pub-1",
        agent: "writer",
        effects: [{ kind: "nats.publish", target: "events", subject: "ev.x", data: "hi" }],
      }),
    );
    expect((await idem(["submit", file, ...cfg])).code).toBe(0);
    const drained = await idem(["interpreter", "--once", "--log-format", "json", ...cfg]);
    expect(drained.stderr).not.toContain("Hunter2");
    for (const args of [
      ["show", "pub-1"],
      ["show", "pub-1", "--json"],
      ["dlq", "ls"],
      ["dlq", "ls", "--json"],
    ]) {
      const r = await idem([...args, ...cfg]);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(r.stdout, args.join(" ")).not.toContain("Hunter2");
    }
    const shown = JSON.parse((await idem(["show", "pub-1", "--json", ...cfg])).stdout) as {
      runs: { state: string; lastError: string }[];
    };
    expect(shown.runs[0]?.state).toBe("dead");
    expect(shown.runs[0]?.lastError).toContain("nats://***@127.0.0.1:1");
  });
});
