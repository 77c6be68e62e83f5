// `idem enqueue` through the real built CLI on the embedded queue: one job as docs/cli.md says, and
// a batch (JSON Lines or a JSON array) that is validated whole before anything is enqueued.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace;
beforeEach(() => {
  ws = workspace({ journal: { path: "journal.db" }, agents: { writer: { command: ["true"] } } });
});
afterEach(() => ws.remove());

const job = (jobId: string, n: number, agent = "writer") => ({ jobId, agent, input: { n } });
const jsonl = (...jobs: unknown[]) => `${jobs.map((j) => JSON.stringify(j)).join("\n")}\n`;
const run = (args: string[], input?: string) =>
  idem(["enqueue", ...args, "--config", ws.config], input === undefined ? {} : { input });

async function jobIds(): Promise<string[]> {
  const journal = await openSqliteJournal(join(ws.dir, "journal.db"));
  try {
    return (await journal.jobs.pending({ since: 0 })).map((j) => j.jobId);
  } finally {
    await journal.close();
  }
}

describe("idem enqueue, one job", () => {
  it("prints the shape of docs/cli.md; the same job again is a duplicate (exit 0), another input a conflict (exit 1)", async () => {
    const first = await run(["-", "--json"], JSON.stringify(job("one", 1)));
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      jobId: "one",
      stream: "embedded",
      seq: 1,
      duplicate: false,
    });
    const again = await run(["-", "--json"], JSON.stringify(job("one", 1)));
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ jobId: "one", duplicate: true, seq: 1 });
    const conflict = await run(["-"], JSON.stringify(job("one", 2)));
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/one is already enqueued with another input/);
    expect(await jobIds()).toEqual(["one"]);
  });

  it("refuses an invalid job naming the field, and writes nothing", async () => {
    const r = await run(["-"], JSON.stringify({ jobId: "bad id", agent: "writer", input: {} }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid job -: nothing enqueued\n\s+jobId: /);
    expect(await jobIds()).toEqual([]);
  });
});

describe("idem enqueue, a job for an agent the config does not know", () => {
  it("is refused on the embedded queue (exit 1), the job and agent named, and nothing is enqueued", async () => {
    const r = await run(["-"], JSON.stringify(job("lost-1", 1, "nobody")));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid job -: nothing enqueued/);
    expect(r.stderr).toMatch(/agent: job lost-1 is for agent "nobody".*unknown-agent.*writer/);
    expect(await jobIds()).toEqual([]);
  });

  it("refuses the whole batch before anything is enqueued, naming the line and the job", async () => {
    const r = await run(["-"], jsonl(job("b-1", 1), job("b-2", 2, "nobody"), job("b-3", 3)));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/1 problem\(s\) in -: nothing enqueued/);
    expect(r.stderr).toMatch(/line 2 agent: job b-2 is for agent "nobody"/);
    expect(await jobIds()).toEqual([]);
  });
});

describe("idem enqueue, a batch", () => {
  it("enqueues JSON Lines in order and says how many; the same file again is all duplicates (exit 0)", async () => {
    const file = join(ws.dir, "jobs.jsonl");
    const jobs = Array.from({ length: 30 }, (_, i) => job(`j-${String(i).padStart(2, "0")}`, i));
    writeFileSync(file, jsonl(...jobs));
    const r = await run([file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^30 jobs: enqueued 30, duplicate 0\n$/);
    expect(await jobIds()).toEqual(jobs.map((j) => j.jobId));

    const again = await run([file, "--json"]);
    expect(again.code).toBe(0);
    const entries = JSON.parse(again.stdout) as { jobId: string; duplicate: boolean }[];
    expect(entries.map((e) => e.jobId)).toEqual(jobs.map((j) => j.jobId));
    expect(entries.every((e) => e.duplicate)).toBe(true);
  });

  it("takes a JSON array too; a batch of one (an array, a .jsonl file) answers with an array", async () => {
    const r = await run(["-", "--json"], JSON.stringify([job("arr-1", 1)]));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { jobId: "arr-1", stream: "embedded", seq: 1, duplicate: false },
    ]);
    const file = join(ws.dir, "one.jsonl");
    writeFileSync(file, jsonl(job("jl-1", 1)));
    const one = await run([file, "--json"]);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual([
      { jobId: "jl-1", stream: "embedded", seq: 2, duplicate: false },
    ]);
  });

  it("refuses the whole file when a line is invalid or contradicts another, naming each line and field", async () => {
    const r = await run(
      ["-"],
      jsonl(job("ok-1", 1), { jobId: "ok-2", agent: "writer" }, job("ok-1", 9), job("ok-3", 3)),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/2 problem\(s\) in -: nothing enqueued/);
    expect(r.stderr).toMatch(/line 2 input: /);
    expect(r.stderr).toMatch(/line 3: job ok-1 has another agent or input than at line 1/);
    expect(await jobIds()).toEqual([]);

    const broken = await run(["-"], `${JSON.stringify(job("ok-1", 1))}\n{"jobId": \n`);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/is not valid JSON Lines: nothing enqueued\n\s+line 2: /);
    expect(await jobIds()).toEqual([]);
  });

  it("refuses a job already enqueued with another input and enqueues the rest (exit 1)", async () => {
    await run(["-"], JSON.stringify(job("x-1", 1)));
    const r = await run(["-", "--json"], jsonl(job("x-0", 0), job("x-1", 2), job("x-2", 2)));
    expect(r.code).toBe(1);
    const entries = JSON.parse(r.stdout) as { jobId: string; error?: { code: string } }[];
    expect(entries.map((e) => e.error?.code ?? "ok")).toEqual(["ok", "JOB_CONFLICT", "ok"]);
    expect((await jobIds()).sort()).toEqual(["x-0", "x-1", "x-2"]);

    const human = await run(["-"], jsonl(job("x-1", 3), job("x-3", 3)));
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^2 jobs: enqueued 1, duplicate 0, refused 1 \(conflict\)\n/);
    expect(human.stdout).toMatch(/x-1: job x-1 is already enqueued with another input/);
  });

  it("says a bad --concurrency is a usage error (exit 2)", async () => {
    const r = await run(["-", "--concurrency", "0"], jsonl(job("c-1", 1)));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--concurrency must be an integer from 1 to 1024, got 0/);
  });
});
