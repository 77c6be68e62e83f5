import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildForTest } from "../chaos/interpreter-fixture.js";
import { type Incident, incident } from "./incident.js";
import { shell, typed } from "./runbook.js";

// docs/runbook.md, "An uncertain webhook": a receiver that loses the first request of each key (it
// takes it and drops the connection unanswered: the effect is uncertain), in the orders
// an on-call engineer can type the commands: the plain one, a `dlq retry` before the resolve, a
// replay before the resolve. No interpreter runs between the steps. Each time the request is acted
// on once, the run's other effect is applied, and the audit is clean.

const SECTION = "An uncertain webhook";
let fx: Incident | undefined;
let server: Server | undefined;
beforeAll(() => buildForTest("apps/cli"));
afterEach(async () => {
  await fx?.close();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  fx = undefined;
  server = undefined;
});

/** The receiver: the first request of a key is taken and lost; later ones are acted on. */
async function receiver(): Promise<{ port: number; acted: string[] }> {
  const seen = new Set<string>();
  const acted: string[] = [];
  server = createServer((req, res) => {
    const key = String(req.headers["idempotency-key"]);
    req.resume();
    if (!seen.has(key)) {
      seen.add(key);
      // Lost: taken whole, then the connection drops with no answer and nothing done. A reset after
      // sending is an unknown outcome to idem, as a timeout is (and it does not depend on speed).
      req.on("end", () => req.socket.destroy());
      return;
    }
    acted.push(key);
    res.end("ok");
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  return { port: (server.address() as AddressInfo).port, acted };
}

const hookOutput = (jobId: string) => ({
  jobId,
  agent: "writer",
  effects: [
    {
      kind: "http.request" as const,
      target: "hooks",
      method: "POST" as const,
      path: "/deploy",
      body: "{}",
    },
    { kind: "file.write" as const, root: "outbox", path: `${jobId}.txt`, content: `${jobId}\n` },
  ],
});

describe("an uncertain webhook, in any order the commands are typed", () => {
  it("sends the request once after a plain resolve, after a dlq retry came first, and after a replay came first", async () => {
    const hooks = await receiver();
    fx = await incident(
      { backoffMs: [50], maxAttempts: 2 },
      {
        http: {
          targets: { hooks: { baseUrl: `http://127.0.0.1:${hooks.port}`, timeoutMs: 60_000 } },
        },
      },
    );
    const cwd = fx.dir;
    const run = (command: string, job: string) => shell(command, { cwd, vars: { JOB: job } });
    // `--once` exits 1 when a run ended dead, as every run here does the first time.
    const interpretOnce = async () => {
      expect(await fx?.start(["interpreter", "--once"]).exited).toBe(1);
    };
    const jobs = ["plain", "retry-first", "replay-first"];
    await fx.record(jobs.map(hookOutput));
    await interpretOnce();
    const listed = await run(typed(SECTION, /^idem dlq ls --json/), "");
    expect(listed.code, listed.stderr).toBe(0);
    expect(
      JSON.parse(listed.stdout)
        .map((u: { key: string }) => u.key)
        .sort(),
    ).toEqual(jobs.map((j) => `${j}/0`).sort());

    // The orders that came before the resolve: a dlq retry, a replay; each made a generation that
    // is uncertain too.
    const retry = await run(
      typed("The interpreter crashed (or was killed, or hangs)", /^idem dlq retry JOB/),
      "retry-first",
    );
    expect(retry.code, retry.stderr).toBe(0);
    await interpretOnce();
    const early = await run(
      'idem replay --job JOB --yes --now --reason "try again"',
      "replay-first",
    );
    expect(early.code).toBe(1); // it ended dead: uncertain again
    expect(hooks.acted).toEqual([]);

    const resolve = typed(SECTION, /^idem dlq resolve JOB --skipped/);
    for (const job of jobs) {
      const r = await run(resolve, job);
      expect(r.code, `${job}: ${r.stderr}`).toBe(0);
    }
    // No interpreter runs: a replay without --now sends nothing, and says so.
    const idle = await run(
      'idem replay --job JOB --kind http.request --yes --reason "receiver lost it"',
      "plain",
    );
    expect(idle.code).toBe(1);
    expect(idle.stdout).toContain("nothing was sent");

    for (const job of jobs) {
      const plan = await run(`${typed(SECTION, /^idem replay --job JOB --dry-run/)} --json`, job);
      expect(plan.code, plan.stderr).toBe(0);
      // The request shows as apply; or, while the run the resolve let go on is still pending (no
      // interpreter runs), the output shows as busy: the replay's --now interprets it first.
      const shown = JSON.parse(plan.stdout) as {
        plan: { key: string; action: string }[];
        busy: string[];
      };
      const apply = shown.plan.some((e) => e.key === `${job}/0` && e.action === "apply");
      expect(apply || shown.busy.includes(job), plan.stdout).toBe(true);
      const send = await run(typed(SECTION, /^idem replay --job JOB --kind http\.request/), job);
      expect(send.code, `${job}: ${send.stdout}${send.stderr}`).toBe(0);
    }
    expect(hooks.acted.sort()).toEqual(jobs.map((j) => `${j}/0`).sort());
    for (const job of jobs) expect(existsSync(join(fx.ws.outboxPath, `${job}.txt`))).toBe(true);
    const again = await run(typed(SECTION, /^idem replay --job JOB --dry-run/), "plain");
    expect(again.code).toBe(0);
    const audit = await shell("idem audit", { cwd });
    expect(audit.code, audit.stdout).toBe(0);
  });
});
