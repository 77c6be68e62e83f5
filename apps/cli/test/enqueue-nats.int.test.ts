// `idem enqueue` with a batch onto a real nats-server: every job once in the stream under its
// Nats-Msg-Id, the same file again stores nothing new.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { connectNats } from "@idem/nats";
import { type NatsServerHandle, startNatsServer } from "@idem/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

let nats: NatsServerHandle;
let ws: Workspace;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.stop();
});
beforeEach(() => {
  ws = workspace({
    journal: { path: "journal.db" },
    agents: { writer: { command: ["true"] } },
    nats: { url: nats.url, stream: "CLI_JOBS", subjectPrefix: "cli" },
  });
});
afterEach(() => ws.remove());

describe("idem enqueue, a batch on JetStream", () => {
  it("publishes each job once under its job ID; the same file again is all duplicates", async () => {
    const jobs = Array.from({ length: 100 }, (_, i) => ({
      jobId: `nb-${i}`,
      agent: "writer",
      input: { i },
    }));
    const input = `${jobs.map((j) => JSON.stringify(j)).join("\n")}\n`;
    const first = await idem(["enqueue", "-", "--json", "--config", ws.config], { input });
    expect(first.code).toBe(0);
    const entries = JSON.parse(first.stdout) as {
      jobId: string;
      stream: string;
      seq: number;
      duplicate: boolean;
    }[];
    expect(entries.map((e) => e.jobId)).toEqual(jobs.map((j) => j.jobId));
    expect(entries.every((e) => e.stream === "CLI_JOBS" && !e.duplicate)).toBe(true);
    expect(new Set(entries.map((e) => e.seq)).size).toBe(100);

    const nc = await connectNats(nats.url);
    try {
      const jsm = await jetstreamManager(nc);
      expect((await jsm.streams.info("CLI_JOBS")).state.messages).toBe(100);
      const stored = await jsm.streams.getMessage("CLI_JOBS", { seq: entries[42]?.seq ?? 0 });
      expect(stored?.header?.get("Nats-Msg-Id")).toBe("nb-42");
      expect(stored?.json()).toEqual(jobs[42]);

      const again = await idem(["enqueue", "-", "--config", ws.config], { input });
      expect(again.code).toBe(0);
      expect(again.stdout).toBe("100 jobs: enqueued 0, duplicate 100\n");
      expect((await jsm.streams.info("CLI_JOBS")).state.messages).toBe(100);
    } finally {
      await nc.close();
    }
  });

  it("stops at a server killed mid-batch (exit 1, the rest not attempted); the same file again completes it", async () => {
    ws.writeConfig({
      journal: { path: "journal.db" },
      agents: { writer: { command: ["true"] } },
      nats: { url: nats.url, stream: "CLI_STOP", subjectPrefix: "clistop", publishRetryMs: 1_000 },
    });
    const n = 20_000;
    const input = `${Array.from({ length: n }, (_, i) =>
      JSON.stringify({ jobId: `ks-${i}`, agent: "writer", input: { i } }),
    ).join("\n")}\n`;
    const journalPath = join(ws.dir, "journal.db");
    const running = idem(["enqueue", "-", "--json", "--concurrency", "4", "--config", ws.config], {
      input,
    });
    // Kill the server once some jobs are in: the batch is then far from done.
    await waitFor(
      "the first jobs",
      async () => existsSync(journalPath) && (await countJobs(journalPath)) >= 50,
    );
    await nats.kill("SIGKILL");
    const stopped = await running;
    await nats.restart();
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/stopped: .*run the same file again/);
    const entries = JSON.parse(stopped.stdout) as { jobId: string; error?: { code: string } }[];
    expect(entries).toHaveLength(n);
    const codes = new Set(entries.map((e) => e.error?.code ?? "ok"));
    expect(codes).toEqual(new Set(["ok", "UNAVAILABLE", "NOT_ATTEMPTED"]));
    const notAttempted = entries.filter((e) => e.error?.code === "NOT_ATTEMPTED").length;
    // Nothing of a job not attempted is written; the unpublished ones are in the outbox.
    expect(await countJobs(journalPath)).toBe(n - notAttempted);

    const again = await idem(["enqueue", "-", "--json", "--config", ws.config], { input });
    expect(again.code).toBe(0);
    const nc = await connectNats(nats.url);
    try {
      const jsm = await jetstreamManager(nc);
      expect((await jsm.streams.info("CLI_STOP")).state.messages).toBe(n);
    } finally {
      await nc.close();
    }
    expect(await countJobs(journalPath)).toBe(n);
  });
});

async function countJobs(path: string): Promise<number> {
  const journal = await openSqliteJournal(path, { readonly: true });
  try {
    return (await journal.jobs.pending({ since: 0 })).length;
  } catch (e) {
    // The CLI may not have created the tables yet.
    if (/no such table/.test((e as Error).message)) return 0;
    throw e;
  } finally {
    await journal.close();
  }
}

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 60_000, // far beyond a passing run on a busy machine
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("idem enqueue --check-agents on JetStream", () => {
  it("refuses a batch with a job for an unknown agent before publishing anything; without the flag it is enqueued", async () => {
    const input = `${JSON.stringify({ jobId: "ca-1", agent: "writer", input: {} })}\n${JSON.stringify({ jobId: "ca-2", agent: "nobody", input: {} })}\n`;
    const refused = await idem(["enqueue", "-", "--check-agents", "--config", ws.config], {
      input,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/line 2 agent: job ca-2 is for agent "nobody".*unknown-agent/);
    const journal = await openSqliteJournal(join(ws.dir, "journal.db"));
    try {
      expect(await journal.jobs.pending({ since: 0 })).toEqual([]);
    } finally {
      await journal.close();
    }
    const accepted = await idem(["enqueue", "-", "--json", "--config", ws.config], { input });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect((JSON.parse(accepted.stdout) as { stream: string }[]).map((e) => e.stream)).toEqual([
      "CLI_JOBS",
      "CLI_JOBS",
    ]);
  });
});
