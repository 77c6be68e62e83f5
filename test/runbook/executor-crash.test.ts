import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { effectKey } from "@idem/schema";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildForTest, trailerCounts, waitFor } from "../chaos/interpreter-fixture.js";
import { COMMIT_AGENT, type Incident, incident, jobsFile } from "./incident.js";
import { shell, typed } from "./runbook.js";

// docs/runbook.md, "The executor crashed (or was killed)": an executor SIGKILLed right after it
// recorded an output (fault point executor.after-record), on the embedded queue. Started again as
// the runbook says, it takes the dead one's delivery over at once (same host), acknowledges the
// recorded job without running its agent again, and runs the rest: every agent once, every key once.

const SECTION = "The executor crashed (or was killed)";
let fx: Incident | undefined;
beforeAll(() => buildForTest("apps/cli"));
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("an executor crash, the runbook's way", () => {
  it("takes the dead executor's delivery over and runs every agent once", async () => {
    fx = await incident(
      {},
      {
        agents: { writer: { command: ["node", "agent.mjs"], timeoutMs: 60_000 } },
        queue: { pollMs: 20, backoffMs: [100], maxDeliver: 3, maxAckPending: 1 },
      },
    );
    const cwd = fx.dir;
    writeFileSync(join(cwd, "agent.mjs"), COMMIT_AGENT);
    const ids = ["x-1", "x-2", "x-3", "x-4"];
    expect((await shell(`idem enqueue ${jobsFile(cwd, "jobs.jsonl", ids)}`, { cwd })).code).toBe(0);
    const crashed = fx.start(["executor"], { IDEM_FAULT: "executor.after-record:2" });
    expect(await crashed.exited, crashed.output()).toBe("SIGKILL");
    const j = await fx.journal();
    const recorded = [];
    for (const id of ids) if (await j.outputs.has(id)) recorded.push(id);
    expect(recorded.length).toBe(2);

    const command = typed(SECTION, /^idem executor\b/).split(" ");
    const restarted = fx.start(command.slice(1));
    await waitFor(
      "every job answered",
      async () => {
        for (const id of ids) if (!(await j.outputs.has(id))) return false;
        return (await j.jobs.list()).length === 0;
      },
      { intervalMs: 100, timeoutMs: 30_000 },
    ).catch(async (e) => {
      const jobs = await shell("idem jobs", { cwd });
      throw new Error(`${(e as Error).message}\n${jobs.stdout}\n${restarted.output()}`);
    });
    const jobs = await shell(`${typed(SECTION, /^idem jobs\b/)} --json`, { cwd });
    expect(JSON.parse(jobs.stdout).jobs).toEqual([]);
    expect(await fx.start(["interpreter", "--once"]).exited).toBe(0);
    const audit = await shell(`${typed(SECTION, /^idem audit\b/)} --json`, { cwd });
    expect(audit.code, audit.stdout).toBe(0);
    const runs = readFileSync(join(cwd, "runs.log"), "utf8").trim().split("\n");
    expect(runs.sort()).toEqual(ids);
    const counts = await trailerCounts(fx.ws.repoPath);
    for (const id of ids) expect(counts.get(effectKey(id, 0))).toBe(1);
  });
});
