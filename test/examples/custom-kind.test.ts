// examples/custom-kind against the real thing: its ticket service started as the example says,
// its kind registered in a workspace made by `idem init`, outputs with acme.ticket effects
// recorded through the executor (the example's command agent), interpreted while the interpreter
// is SIGKILLed at idem's fault points and the kind's own, then the dry-run replay plan, the audit
// and the conformance drill.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { buildForTest, IDEM_BIN, REPO_ROOT } from "../chaos/interpreter-fixture.js";

const EXAMPLE = join(REPO_ROOT, "examples/custom-kind");
const KIND_MODULE = join(EXAMPLE, "kinds/ticket.mjs");
const TOKEN = "example-ticket-token";
/** A generous bound for what a busy machine does in well under a second: never an assertion. */
const PATIENCE_MS = 120_000;
const JOBS = ["ticket-1", "ticket-2", "ticket-3", "ticket-4"];

const run = promisify(execFile);

beforeAll(() => buildForTest("apps/cli"));

function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ACME_TOKEN: TOKEN, ...extra };
  delete env.IDEM_CONFIG;
  delete env.NATS_URL;
  delete env.IDEM_JOURNAL_URL;
  if (!("IDEM_FAULT" in extra)) delete env.IDEM_FAULT;
  return env;
}

async function idem(cwd: string, args: string[], extra: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [IDEM_BIN, ...args], {
      cwd,
      env: childEnv(extra),
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0 as number | null, signal: null as string | null, stdout, stderr };
  } catch (e) {
    const err = e as { code: number | null; signal: string | null; stdout: string; stderr: string };
    return { code: err.code, signal: err.signal, stdout: err.stdout, stderr: err.stderr };
  }
}

/** A child process started as the example says, with the first line of JSON it prints. */
async function startChild(
  args: string[],
  cwd: string,
  pattern: RegExp,
): Promise<{ url: string; log: () => string } & AsyncDisposable> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no URL in the log:\n${log}`)), PATIENCE_MS);
    const look = (d: Buffer) => {
      log += d.toString("utf8");
      const m = pattern.exec(log);
      if (m?.[1]) {
        clearTimeout(timer);
        res(m[1]);
      }
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", look);
    child.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`${args.join(" ")} exited with ${code}:\n${log}`));
    });
  });
  return {
    url,
    log: () => log,
    async [Symbol.asyncDispose]() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The tickets at the service carrying `externalId`. */
async function ticketsOf(service: string, externalId: string): Promise<{ id: string }[]> {
  const res = await fetch(`${service}/tickets?externalId=${encodeURIComponent(externalId)}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { tickets: { id: string }[] }).tickets;
}

describe("examples/custom-kind", () => {
  it("opens each ticket once through the executor and a SIGKILLed interpreter; replay, audit and the drill agree", async () => {
    await using dir = await tempDir("idem-example-kind-");
    await using service = await startChild(
      [join(EXAMPLE, "ticket-service.mjs"), "--port", "0"],
      EXAMPLE,
      /"url":"(http:\/\/[0-9.]+:\d+)"/,
    );
    // A workspace as a new user makes it: idem init, then the example's agent and kind.
    const init = await idem(dir.path, ["init"]);
    expect(init.code, init.stderr).toBe(0);
    const configFile = join(dir.path, "idem.config.json");
    const config = JSON.parse(readFileSync(configFile, "utf8")) as Record<string, unknown>;
    const example = JSON.parse(readFileSync(join(EXAMPLE, "idem.config.json"), "utf8")) as {
      agents: { ticketer: { command: string[] } };
      kinds: Record<string, { options: Record<string, unknown> }>;
      queue: Record<string, unknown>;
    };
    const token = (config.api as { token: string }).token;
    config.agents = {
      ticketer: { ...example.agents.ticketer, command: ["node", join(EXAMPLE, "agent.mjs")] },
    };
    config.kinds = {
      "acme.ticket": {
        module: KIND_MODULE,
        options: { ...example.kinds["acme.ticket"]?.options, baseUrl: service.url },
      },
    };
    config.queue = { ...(config.queue as object), ...example.queue };
    config.interpreter = { ...(config.interpreter as object), leaseMs: 1000, pollMs: 20 };
    writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);

    {
      await using executor = await startChild(
        [IDEM_BIN, "executor", "--port", "0"],
        dir.path,
        /"?url"?\W+(http:\/\/[0-9.]+:\d+)/,
      );
      // The OpenAPI document the executor serves states the registered kind's spec.
      const openapi = await fetch(`${executor.url}/v1/openapi.json`);
      expect(await openapi.text()).toContain('"acme.ticket"');
      for (const jobId of JOBS) {
        const job = join(dir.path, `${jobId}.json`);
        writeFileSync(
          job,
          JSON.stringify({
            jobId,
            agent: "ticketer",
            input: { title: `Export failed (${jobId})` },
          }),
        );
        const enqueued = await idem(dir.path, ["enqueue", job]);
        expect(enqueued.code, enqueued.stderr).toBe(0);
      }
      for (const jobId of JOBS) {
        const deadline = Date.now() + PATIENCE_MS;
        for (;;) {
          const res = await fetch(`${executor.url}/v1/outputs/${jobId}`, {
            headers: { authorization: `Bearer ${token}` },
          });
          if (res.status === 200) {
            expect(await res.json()).toMatchObject({
              output: { effects: [{ kind: "acme.ticket", queue: "support" }] },
            });
            break;
          }
          await res.body?.cancel();
          if (Date.now() > deadline) throw new Error(`${jobId} not recorded:\n${executor.log()}`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }

    // Killed with a ticket made and nothing recorded: after idem's apply, and inside the kind's.
    for (const fault of ["interpreter.after-apply:1", "acme.after-create:1"]) {
      const killed = await idem(dir.path, ["interpreter", "--once"], { IDEM_FAULT: fault });
      expect(killed.signal, `${fault}: ${killed.stderr}`).toBe("SIGKILL");
    }
    const drained = await idem(dir.path, ["interpreter", "--once"]);
    expect(drained.code, drained.stderr + drained.stdout).toBe(0);
    for (const jobId of JOBS) expect(await ticketsOf(service.url, `${jobId}/0`)).toHaveLength(1);

    const plan = await idem(dir.path, ["replay", "--all", "--dry-run", "--json"]);
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout) as {
      plan: { key: string; kind: string; action: string }[];
    };
    expect(planned.plan.map((p) => [p.key, p.kind, p.action]).sort()).toEqual(
      JOBS.map((j) => [`${j}/0`, "acme.ticket", "skip"]),
    );

    const audit = await idem(dir.path, ["audit", "--json"]);
    expect(audit.code, audit.stderr + audit.stdout).toBe(0);
    const report = JSON.parse(audit.stdout) as {
      effects: { applied: number; present: number };
      duplicateEffectsAtTargets: number;
      unknownKeys: unknown[];
      targets: { target: string; keys: number }[];
    };
    expect(report.effects.applied + report.effects.present).toBe(JOBS.length);
    expect(report.duplicateEffectsAtTargets).toBe(0);
    expect(report.unknownKeys).toEqual([]);
    expect(report.targets.map((t) => t.keys)).toContain(JOBS.length);

    const listed = await idem(dir.path, ["kinds", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).kinds).toContainEqual(
      expect.objectContaining({ name: "acme.ticket", module: KIND_MODULE, scan: true }),
    );

    // The drill on the registered kind, with the config's options, at the same service.
    const drill = await idem(dir.path, [
      "kinds",
      "test",
      "acme.ticket",
      "--outputs",
      "2",
      "--json",
    ]);
    const verdict = JSON.parse(drill.stdout) as { verdict: string; findings: unknown[] };
    expect(verdict.findings).toEqual([]);
    expect(verdict.verdict).toBe("exactly-once-in-effect");
    expect(drill.code).toBe(0);
  });
});
