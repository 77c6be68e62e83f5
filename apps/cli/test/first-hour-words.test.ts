// The smaller points of the first hour (issue 50): `idem --help` grouped, `idem status` and
// `idem jobs` calling a job waiting for its retry by one word, doctor's hint naming something a
// global install has.
import { afterEach, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "./ops-fixture.js";
import { idem } from "./ops-helpers.js";

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("the first hour's words", () => {
  it("groups idem --help's commands, each under one heading", async () => {
    const help = await idem(["--help"]);
    expect(help.code).toBe(0);
    const headings = [...help.stdout.matchAll(/^(\S[^:\n]*):$/gm)].map((m) => m[1]);
    expect(headings).toEqual([
      "Options",
      "Start",
      "Run",
      "Record and queue",
      "Look",
      "Decide",
      "After an incident",
      "Help",
    ]);
    const under = (heading: string) => {
      const from = help.stdout.indexOf(`\n${heading}:\n`);
      const rest = help.stdout.slice(from + heading.length + 3);
      const end = rest.search(/\n\n/);
      return [...(end < 0 ? rest : rest.slice(0, end)).matchAll(/^ {2}([\w-]+)/gm)].map(
        (m) => m[1],
      );
    };
    expect(under("Start")).toEqual(["init", "demo", "stand-in", "version"]);
    expect(under("Look")).toEqual(["status", "jobs", "ls", "show", "kinds", "doctor"]);
  });

  it("says waiting in idem status for the job idem jobs calls waiting (a retry due later)", async () => {
    fx = await opsFixture({ agents: { writer: { command: ["node", "agent.mjs"] } } });
    const cfg = ["--config", fx.ws.config];
    await fx.journal.jobs.enqueue({ jobId: "retry-1", agent: "writer", input: {} });
    const claimed = await fx.journal.jobs.claimNext({ owner: "t", leaseMs: 60_000 });
    if (!claimed) throw new Error("no job to claim");
    await fx.journal.jobs.fail(claimed.lease, {
      class: "transient",
      error: "model overloaded",
      nextAt: Date.now() + 3_600_000,
    });
    await fx.journal.jobs.enqueue({ jobId: "due-2", agent: "writer", input: {} });

    const jobs = JSON.parse((await idem(["jobs", "--json", ...cfg])).stdout) as {
      counts: Record<string, number>;
    };
    expect(jobs.counts).toMatchObject({ queued: 1, waiting: 1 });
    const status = await idem(["status", ...cfg]);
    const head = status.stdout.split("\n").find((l) => l.includes("jobs queued")) ?? "";
    const row = status.stdout.split("\n")[status.stdout.split("\n").indexOf(head) + 1] ?? "";
    const cells = (l: string) =>
      l
        .split("│")
        .map((c) => c.trim())
        .filter((c) => c !== "");
    const counts = Object.fromEntries(cells(head).map((h, i) => [h, cells(row)[i]]));
    expect(counts).toMatchObject({ "jobs queued": "1", "jobs waiting": "1" });
    const json = JSON.parse((await idem(["status", "--json", ...cfg])).stdout) as {
      jobs: { queued: number };
      jobsWaiting: number;
    };
    expect(json).toMatchObject({ jobs: { queued: 2 }, jobsWaiting: 1 });
  });

  it("points doctor's hint for a config without agents at idem init --example, which every install has", async () => {
    fx = await opsFixture();
    const doctor = await idem(["doctor", "--json", "--config", fx.ws.config]);
    const findings = (JSON.parse(doctor.stdout) as { findings: { key: string; fix: string }[] })
      .findings;
    expect(findings.find((f) => f.key === "agents")?.fix).toContain("idem init --example");
  });
});
