// Issue 42, item 3: an output for a job the journal knows is refused unless its `agent` is the
// job's, on every surface that records (HTTP, NATS, `idem submit`, MCP's finish): one check in
// core's recordOutput, so the surfaces agree.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadKinds } from "@idem/core";
import { createApiApp, createExecutor, createExecutorMetrics } from "@idem/executor";
import { openSqliteJournal } from "@idem/journal";
import { MemoryDraftStore, startMcpHttpServer } from "@idem/mcp";
import { silentLogger } from "@idem/runtime";
import { type Config, parseConfig } from "@idem/schema";
import { startNatsServer, tempDir } from "@idem/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { IDEM_BIN } from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);

const RAW = {
  journal: { path: "journal.db" },
  roots: { outbox: { path: "outbox" } },
  agents: {
    alpha: { command: ["true"] },
    beta: { command: ["true"] },
  },
};

const output = (jobId: string, agent: string) => ({
  jobId,
  agent,
  effects: [{ kind: "file.write", root: "outbox", path: `${jobId}.txt`, content: agent }],
});

function configIn(dir: string, extra: Record<string, unknown> = {}): Config {
  const r = parseConfig({ ...RAW, ...extra }, { dir });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

describe("an output for another agent's job", () => {
  it("is refused as invalid at `agent` over HTTP, NATS, idem submit and MCP; the job's own agent records it", async () => {
    await using dir = await tempDir("idem-own-jobs-");
    await using nats = await startNatsServer();
    const subjectPrefix = "idem_own";
    const config = configIn(dir.path, {
      nats: { url: nats.url, subjectPrefix, stream: "OWN_JOBS" },
    });
    writeFileSync(join(dir.path, "idem.config.json"), JSON.stringify(RAW));
    const journal = await openSqliteJournal(config.journal.path);
    const executor = createExecutor({
      config,
      journal,
      agents: [],
      logger: silentLogger(),
    });
    const nc = await connect({ servers: nats.url });
    try {
      await loadKinds(config);
      for (const id of ["b-http", "b-nats", "b-cli", "b-mcp"])
        expect((await journal.jobs.enqueue({ jobId: id, agent: "beta", input: {} })).status).toBe(
          "enqueued",
        );
      const refusedAt = (body: unknown) => {
        const answer = body as { status: string; issues?: { path: string }[] };
        expect(answer.status).toBe("invalid");
        expect(answer.issues?.map((i) => i.path)).toEqual(["agent"]);
      };

      // HTTP
      const app = createApiApp({
        config,
        journal,
        metrics: createExecutorMetrics(),
        logger: silentLogger(),
      });
      const post = (body: unknown) =>
        app.request("/v1/outputs", {
          method: "POST",
          headers: { "content-type": "application/json", host: "127.0.0.1" },
          body: JSON.stringify(body),
        });
      const http = await post(output("b-http", "alpha"));
      expect(http.status).toBe(400);
      refusedAt(await http.json());

      // NATS
      await executor.start();
      const reply = await nc.request(
        `${subjectPrefix}.submit`,
        JSON.stringify(output("b-nats", "alpha")),
        { timeout: 30_000 },
      );
      refusedAt(reply.json());

      // idem submit (the built CLI, on the same journal file)
      const file = join(dir.path, "out.json");
      writeFileSync(file, JSON.stringify(output("b-cli", "alpha")));
      const cli = await run(process.execPath, [
        IDEM_BIN,
        "submit",
        file,
        "--json",
        "--config",
        join(dir.path, "idem.config.json"),
      ]).catch((e: { code: number; stdout: string }) => e);
      expect((cli as { code?: number }).code).toBe(1);
      refusedAt(JSON.parse(cli.stdout));
      // In a batch it refuses the batch whole, as every other problem does: nothing recorded.
      const batch = join(dir.path, "batch.jsonl");
      writeFileSync(
        batch,
        `${JSON.stringify(output("free-1", "alpha"))}\n${JSON.stringify(output("b-cli", "alpha"))}\n`,
      );
      const batchRun = await run(process.execPath, [
        IDEM_BIN,
        "submit",
        batch,
        "--json",
        "--config",
        join(dir.path, "idem.config.json"),
      ]).catch((e: { code: number; stdout: string }) => e);
      expect((batchRun as { code?: number }).code).toBe(1);
      const answers = JSON.parse(batchRun.stdout) as {
        status: string;
        issues: { path: string }[];
      }[];
      expect(answers.map((a) => [a.status, a.issues[0]?.path])).toEqual([
        ["invalid", ""],
        ["invalid", "agent"],
      ]);
      expect(await journal.outputs.get("free-1")).toBeUndefined();

      // MCP: a session opened for a job the journal did not know yet, as agent alpha; the job is
      // then enqueued for beta, and finish is refused by the same check.
      const mcp = await startMcpHttpServer({
        context: {
          config,
          kinds: await loadKinds(config),
          journal,
          actor: "test (mcp)",
          operatorTools: "off",
          drafts: new MemoryDraftStore(),
        },
        token: null,
        host: "127.0.0.1",
        port: 0,
        finish: "record",
      });
      const client = new Client({ name: "own-jobs-test", version: "1.0.0" });
      try {
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${mcp.endpoint}?job=late-b&agent=alpha`)),
        );
        const staged = (await client.callTool({
          name: "effect_file_write",
          arguments: { root: "outbox", path: "late.txt", content: "x" },
        })) as CallToolResult;
        expect(staged.isError, JSON.stringify(staged)).toBeFalsy();
        await journal.jobs.enqueue({ jobId: "late-b", agent: "beta", input: {} });
        const finish = (await client.callTool({
          name: "finish",
          arguments: { summary: "done" },
        })) as CallToolResult;
        expect(finish.isError).toBe(true);
        expect(finish.structuredContent).toMatchObject({
          status: "invalid",
          issues: [{ path: "agent" }],
        });
      } finally {
        await client.close();
        await mcp.close();
      }

      for (const id of ["b-http", "b-nats", "b-cli", "late-b"])
        expect(await journal.outputs.get(id)).toBeUndefined();
      // The job's own agent records it, on the same path.
      const own = await post(output("b-http", "beta"));
      expect(own.status).toBe(201);
    } finally {
      await nc.close();
      await executor.stop();
      await journal.close();
    }
  });
});
