// Every table of the CLI fits the terminal: 120 columns when stdout is not one (a pipe, as here),
// whatever the job IDs, owner IDs and errors it shows (issue 50). Long cells wrap inside their
// column; owner IDs show as host:pid:random, in full with --wide and in --json.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "./ops-fixture.js";
import { idem } from "./ops-helpers.js";

const LONG_JOB =
  "incident-4711-regional-outage-follow-up-summary-for-the-platform-team-and-the-on-call-rotation-eu-west-1";
const OWNER =
  "ip-10-0-12-34.eu-west-1.compute.internal:123456:deadbeef@72bf406f-aad7-420c-8422-f59612b84160/4026531836/45215";
const LONG_ERROR =
  "agent writer exited with code 1: Error: request to https://api.example.com/v1/completions failed, reason: socket hang up (ECONNRESET) after 3 retries over 90 s; the upstream answered 503 Service Unavailable with a body of 2 KB that said the model is overloaded, please retry later";

let fx: OpsFixture;
let cfg: string[];

beforeAll(async () => {
  fx = await opsFixture({
    agents: { writer: { command: ["node", "agent.mjs"] } },
    roots: {
      outbox: { path: "outbox" },
      archive: { path: "does/not/exist/a/folder/with/a/rather/long/name/for/the/archive" },
    },
  });
  cfg = ["--config", fx.ws.config];
  const j = fx.journal;
  // Outputs, interpreted: file writes and commits under long job IDs.
  for (const n of [1, 2, 3]) {
    await fx.record(`${LONG_JOB}-${n}`, [
      { kind: "file.write", root: "outbox", path: `reports/${LONG_JOB}-${n}.md`, content: "x\n" },
      {
        kind: "git.commit",
        repo: "site",
        message: `report ${n}`,
        files: [{ path: `reports/${n}.md`, content: "y\n" }],
      },
    ]);
  }
  await fx.interpret();
  // A dead run with a long error.
  await fx.record(`${LONG_JOB}-dead`, []);
  const claim = await j.runs.claim({ owner: OWNER, leaseMs: 60_000, maxLeaseExpiries: 3 });
  if (!claim) throw new Error("no run to claim");
  await j.runs.markDead(claim.lease, { class: "logic", error: LONG_ERROR });
  // A dead-lettered job, a job waiting for its retry, a leased one and a queued one.
  const job = (id: string) => ({ jobId: `${LONG_JOB}-${id}`, agent: "writer", input: { id } });
  await j.jobs.enqueue(job("dead-letter"));
  const first = await j.jobs.claimNext({ owner: OWNER, leaseMs: 60_000 });
  if (!first) throw new Error("no job to claim");
  await j.jobs.fail(first.lease, { class: "transient", error: LONG_ERROR, nextAt: 0 });
  expect(await j.jobs.claimNext({ owner: OWNER, leaseMs: 60_000, maxDeliver: 1 })).toBeUndefined();
  await j.jobs.enqueue(job("retry"));
  const retry = await j.jobs.claimNext({ owner: OWNER, leaseMs: 60_000 });
  if (!retry) throw new Error("no job to claim");
  await j.jobs.fail(retry.lease, {
    class: "transient",
    error: LONG_ERROR,
    nextAt: Date.now() + 3_600_000,
  });
  await j.jobs.enqueue(job("leased"));
  expect(await j.jobs.claimNext({ owner: OWNER, leaseMs: 3_600_000 })).toBeDefined();
  await j.jobs.enqueue(job("queued"));
});
afterAll(async () => {
  await fx?.close();
  fx?.ws.remove();
});

/** The lines wider than `max` characters. */
const wider = (text: string, max = 120) => text.split("\n").filter((l) => [...l].length > max);

describe("the CLI's tables", () => {
  const commands: [string, string[]][] = [
    ["doctor", ["doctor"]],
    ["show (an output)", ["show", `${LONG_JOB}-1`]],
    ["show (a job without output)", ["show", `${LONG_JOB}-leased`]],
    ["jobs", ["jobs"]],
    ["dlq ls", ["dlq", "ls"]],
    ["ls", ["ls"]],
    ["status", ["status"]],
    ["audit", ["audit"]],
    ["replay --dry-run", ["replay", "--all", "--dry-run"]],
    ["kinds", ["kinds"]],
  ];
  for (const [name, args] of commands) {
    it(`${name}: every line fits 120 columns when stdout is not a terminal`, async () => {
      const r = await idem([...args, ...cfg]);
      expect(r.stderr).not.toMatch(/^idem: /m);
      expect(r.stdout).toMatch(/┌/);
      expect(wider(r.stdout), r.stdout).toEqual([]);
    });
  }

  it("fits COLUMNS when it is set, and shows owner IDs short, in full with --wide and --json", async () => {
    const narrow = await idem(["jobs", ...cfg], { env: { COLUMNS: "90" } });
    expect(wider(narrow.stdout, 90), narrow.stdout).toEqual([]);
    expect(narrow.stdout).toContain("deadbeef");
    expect(narrow.stdout).not.toContain("72bf406f");
    // The error is wrapped inside its cell, not cut to an unreadable stub.
    for (const part of ["socket", "hang", "retries", "upstream", "answered"])
      expect(narrow.stdout).toContain(part);

    const wide = await idem(["jobs", "--wide", ...cfg]);
    expect(wide.stdout).toContain(OWNER);
    expect(wider(wide.stdout).length).toBeGreaterThan(0);
    const json = JSON.parse((await idem(["jobs", "--json", ...cfg])).stdout) as {
      jobs: { holder: string | null }[];
    };
    expect(json.jobs.map((j) => j.holder)).toContain(OWNER);
  });
});
