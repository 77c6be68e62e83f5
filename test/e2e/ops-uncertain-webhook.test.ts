import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "../../apps/cli/test/ops-fixture.js";
import { idem } from "../../apps/cli/test/ops-helpers.js";

let fx: OpsFixture | undefined;
let server: Server | undefined;
afterEach(async () => {
  await fx?.close();
  if (server) {
    server.closeAllConnections();
    await new Promise((r) => server?.close(r));
  }
  fx = undefined;
  server = undefined;
});

describe("an uncertain webhook, the runbook's way", () => {
  it("plans it as uncertain, refuses dlq resolve without --reason, and completes the run after a recorded decision", async () => {
    const hits: string[] = [];
    server = createServer((req) => {
      hits.push(String(req.headers["idempotency-key"]));
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    fx = await opsFixture({
      // The request reaches the server long before the timeout, however busy the machine.
      http: { targets: { hooks: { baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 5_000 } } },
    });
    await fx.record("hook", [
      { kind: "http.request", target: "hooks", method: "POST", path: "/deploy", body: "{}" },
      { kind: "file.write", root: "outbox", path: "after.txt", content: "after the hook\n" },
    ]);
    const first = await fx.interpret();
    expect(first.dead.map((d) => [d.jobId, d.class])).toEqual([["hook", "uncertain"]]);
    const cfg = ["--config", fx.ws.config];

    const plan = await idem(["replay", "--job", "hook", "--dry-run", "--json", ...cfg]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout).summary).toMatchObject({ uncertain: 1 });

    const listed = await idem(["dlq", "ls", "--json", ...cfg]);
    expect(JSON.parse(listed.stdout).uncertain.map((u: { key: string }) => u.key)).toEqual([
      "hook/0",
    ]);

    const refused = await idem(["dlq", "resolve", "hook", "--applied", ...cfg]);
    expect(refused.code).toBe(2);
    expect((await fx.journal.ledger.forJob("hook", 1))[0]?.state).toBe("uncertain");

    const ok = await idem(
      ["dlq", "resolve", "hook", "--applied", "--reason", "hooks log shows it", ...cfg],
      { env: { IDEM_ACTOR: "oncall" } },
    );
    expect(ok.code, ok.stderr).toBe(0);
    const events = await fx.journal.events.list({ jobId: "hook" });
    expect(events.find((e) => e.type === "effect.resolved")).toMatchObject({ actor: "oncall" });

    expect((await fx.interpret()).runs.done).toBe(1);
    expect(readFileSync(join(fx.rootDir, "after.txt"), "utf8")).toBe("after the hook\n");
    expect(hits).toEqual(["hook/0"]);

    const audit = await idem(["audit", "--json", ...cfg]);
    expect(audit.code).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ unverifiable: 1, drift: [] });
    const again = await idem(["replay", "--job", "hook", "--dry-run", "--json", ...cfg]);
    expect(JSON.parse(again.stdout).plan.map((e: { action: string }) => e.action)).toEqual([
      "skip",
      "skip",
    ]);
  });
});
