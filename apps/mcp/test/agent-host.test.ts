// The executor's MCP host (createMcpAgentHost) in process, with a real executor on the embedded
// queue and real agents: each run's endpoint is bound to its job behind its own secret; an agent
// that exits 0 without finish has its staged effects as its output; one that fails has nothing
// recorded; an executor without the host refuses to start an MCP agent.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { enqueueJob, loadKinds, showJob, showPendingJob } from "@idem/core";
import { createExecutor } from "@idem/executor";
import { createMcpAgentHost } from "@idem/mcp";
import { silentLogger } from "@idem/runtime";
import { type Config, isIdemError, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { eventually, IDEM_BIN } from "./helpers.js";

const AGENT = join(import.meta.dirname, "fixtures/mcp-agent.mjs");

async function configIn(dir: string, journalPath: string, extra: Record<string, unknown> = {}) {
  mkdirSync(join(dir, "outbox"), { recursive: true });
  const r = parseConfig(
    {
      journal: { path: journalPath },
      roots: { outbox: { path: "outbox" } },
      agents: { writer: { command: [process.execPath, AGENT], mcp: true, timeoutMs: 120_000 } },
      queue: { backoffMs: [100], maxDeliver: 1, pollMs: 50 },
      ...extra,
    },
    { dir },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  await loadKinds(r.config);
  return r.config;
}

const connect = async (url: string, token: string) => {
  const client = new Client({ name: "host-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
};

describe("the executor's MCP host", () => {
  it("binds each run to its job: its secret opens its endpoint only, another job cannot be named, and the draft is sealed with what was staged", async () => {
    await using tj = await tempJournal();
    const config = await configIn(tj.dir, tj.path);
    const host = createMcpAgentHost({
      config,
      journal: tj.journal,
      idem: [process.execPath, IDEM_BIN],
      actor: "test",
    });
    const a = await host.open({ jobId: "job-a", agent: "writer", input: { n: 1 } });
    const b = await host.open({ jobId: "job-b", agent: "writer", input: { n: 2 } });
    try {
      expect(JSON.parse(a.env.IDEM_MCP_COMMAND as string)).toEqual([
        process.execPath,
        IDEM_BIN,
        "mcp",
        "--connect",
        a.env.IDEM_MCP_URL,
        "--token-file",
        expect.any(String),
      ]);
      await expect(
        connect(b.env.IDEM_MCP_URL as string, a.env.IDEM_MCP_TOKEN as string),
      ).rejects.toThrow();
      await expect(
        connect(`${a.env.IDEM_MCP_URL}?job=job-b`, a.env.IDEM_MCP_TOKEN as string),
      ).rejects.toThrow();
      const client = await connect(a.env.IDEM_MCP_URL as string, a.env.IDEM_MCP_TOKEN as string);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).not.toContain("replay");
      expect(
        (await client.callTool({ name: "job_input", arguments: {} })).structuredContent,
      ).toEqual({
        jobId: "job-a",
        agent: "writer",
        input: { n: 1 },
      });
      const staged = await client.callTool({
        name: "effect_file_write",
        arguments: { root: "outbox", path: "a.txt", content: "a" },
      });
      expect(staged.structuredContent).toMatchObject({ key: "job-a/0" });
      await client.close();
      expect(await a.seal()).toEqual({
        jobId: "job-a",
        agent: "writer",
        effects: [{ kind: "file.write", root: "outbox", path: "a.txt", content: "a" }],
      });
      // Sealed: nothing more is staged, whatever arrives late.
      const late = await connect(a.env.IDEM_MCP_URL as string, a.env.IDEM_MCP_TOKEN as string);
      const refused = await late.callTool({
        name: "effect_file_write",
        arguments: { root: "outbox", path: "late.txt", content: "late" },
      });
      expect(refused.isError).toBe(true);
      await late.close();
      expect((await b.seal()).effects).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
    await expect(
      connect(a.env.IDEM_MCP_URL as string, a.env.IDEM_MCP_TOKEN as string),
    ).rejects.toThrow();
  });

  it("records what an agent staged when it exits 0 without finish, and nothing of one that exits 1", async () => {
    await using tj = await tempJournal();
    const markers = join(tj.dir, "markers");
    mkdirSync(markers);
    writeFileSync(join(markers, "started"), "");
    const config: Config = await configIn(tj.dir, tj.path);
    const executor = createExecutor({
      config,
      journal: tj.journal,
      logger: silentLogger(),
      mcp: createMcpAgentHost({
        config,
        journal: tj.journal,
        idem: [process.execPath, IDEM_BIN],
        actor: "test",
      }),
    });
    await executor.start();
    try {
      const enqueue = (jobId: string, input: Record<string, unknown>) =>
        enqueueJob(
          { jobId, agent: "writer", input: { markerDir: markers, ...input } },
          { journal: tj.journal },
        );
      await enqueue("quiet-1", { finish: false });
      await enqueue("fails-1", { exitCode: 1 });
      const quiet = await eventually("quiet-1's output", async () =>
        showJob(tj.journal, "quiet-1").catch((e: unknown) => {
          if (isIdemError(e, "NOT_FOUND")) return undefined;
          throw e;
        }),
      );
      expect(quiet.output.output).toEqual({
        jobId: "quiet-1",
        agent: "writer",
        effects: [
          {
            kind: "file.write",
            root: "outbox",
            path: "second-a.txt",
            content: "second run, a\n",
          },
          {
            kind: "file.write",
            root: "outbox",
            path: "second-b.txt",
            content: "second run, b\n",
          },
        ],
      });
      const dead = await eventually("fails-1 dead-lettered", async () => {
        const v = await showPendingJob(tj.journal, config, "fails-1");
        return v.job.state === "dead-lettered" ? v : undefined;
      });
      expect(dead.deadLetter?.lastError).toContain("exited with code 1");
      await expect(showJob(tj.journal, "fails-1")).rejects.toMatchObject({ code: "NOT_FOUND" });
    } finally {
      await executor.stop();
    }
  });

  it("is needed: an executor without one refuses to start an MCP agent (INVALID_CONFIG naming the key)", async () => {
    await using tj = await tempJournal();
    const config = await configIn(tj.dir, tj.path);
    const executor = createExecutor({ config, journal: tj.journal, logger: silentLogger() });
    await expect(executor.start()).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      details: { field: "agents.writer.mcp" },
    });
    await executor.stop();
  });
});
