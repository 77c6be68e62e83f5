// Issue 42, item 3: credentials per agent. Agent alpha's token (or NATS user) cannot record for
// agent beta's job, nor an effect outside its scope: over HTTP (the executor's API on a socket),
// over NATS (a real nats-server with a user per agent and subject permissions) and over MCP (the
// SDK's client against `idem mcp --http`'s endpoint); the operator's token keeps every right.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadKinds, openEffects, resolveCredentials } from "@idem/core";
import { createExecutor, createExecutorMetrics, startApiServer } from "@idem/executor";
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

const OPERATOR_TOKEN = "operator-token-0123456789abcdef";
const ENV = {
  IDEM_TOKEN_ALPHA: "alpha-token-0123456789abcdef",
  IDEM_TOKEN_BETA: "beta-token-0123456789abcdef",
};
const PREFIX = "idem_cred";

const RAW = {
  journal: { path: "journal.db" },
  roots: { outbox: { path: "outbox" }, secrets: { path: "secrets" } },
  agents: { alpha: { command: ["true"] }, beta: { command: ["true"] } },
  api: { token: OPERATOR_TOKEN },
  mcp: { operatorTools: "read" },
  credentials: {
    alpha: { tokenEnv: "IDEM_TOKEN_ALPHA", effects: { "file.write": ["outbox"] } },
    beta: { tokenEnv: "IDEM_TOKEN_BETA", effects: { "file.write": "*" } },
  },
};

const write = (root: string, path: string) => ({ kind: "file.write", root, path, content: "x" });
const output = (jobId: string, agent: string, root = "outbox") => ({
  jobId,
  agent,
  effects: [write(root, `${jobId}.txt`)],
});

function configIn(dir: string, extra: Record<string, unknown> = {}): Config {
  const r = parseConfig({ ...RAW, ...extra }, { dir });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

/** A status and, for a submit answer, the paths its issues name. */
type Seen = { status: string; paths?: string[] };
const seen = (body: unknown): Seen => {
  const b = body as { status: string; issues?: { path: string }[] };
  return b.issues ? { status: b.status, paths: b.issues.map((i) => i.path) } : { status: b.status };
};

describe("credentials per agent", () => {
  it("hold alpha's token to its own jobs and scope over HTTP; the operator's token keeps every right", async () => {
    await using dir = await tempDir("idem-cred-http-");
    const config = configIn(dir.path);
    const journal = await openSqliteJournal(config.journal.path);
    const api = await startApiServer({
      config,
      journal,
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
      credentials: resolveCredentials(config, ENV),
      port: 0,
    });
    try {
      for (const [jobId, agent] of [
        ["a-1", "alpha"],
        ["a-2", "alpha"],
        ["b-1", "beta"],
      ] as const)
        await journal.jobs.enqueue({ jobId, agent, input: {} });
      const call = async (method: string, path: string, token: string, body?: unknown) => {
        const r = await fetch(`${api.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { http: r.status, ...seen(await r.json()) };
      };
      const submit = (token: string, body: unknown) => call("POST", "/v1/outputs", token, body);
      const alpha = ENV.IDEM_TOKEN_ALPHA;

      expect(await submit(alpha, output("b-1", "beta"))).toEqual({
        http: 403,
        status: "forbidden",
        paths: ["agent"],
      });
      expect(await submit(alpha, output("b-1", "alpha"))).toEqual({
        http: 400,
        status: "invalid",
        paths: ["agent"],
      });
      expect(await submit(alpha, output("later-1", "alpha"))).toEqual({
        http: 403,
        status: "forbidden",
        paths: ["jobId"],
      });
      expect(await submit(alpha, output("a-1", "alpha", "secrets"))).toEqual({
        http: 403,
        status: "forbidden",
        paths: ["effects.0.root"],
      });
      expect(await submit("not-a-token-of-this-config", output("a-1", "alpha"))).toMatchObject({
        http: 401,
      });
      expect(await submit(alpha, output("a-1", "alpha"))).toEqual({
        http: 201,
        status: "recorded",
      });
      // What only the operator may do.
      expect(
        await call("POST", "/v1/jobs", alpha, { jobId: "a-9", agent: "alpha", input: {} }),
      ).toMatchObject({ http: 403 });
      expect(await submit(OPERATOR_TOKEN, output("b-1", "beta", "secrets"))).toEqual({
        http: 201,
        status: "recorded",
      });
      expect((await call("GET", "/v1/outputs/b-1", alpha)).http).toBe(403);
      expect((await call("GET", "/v1/outputs/a-1", alpha)).http).toBe(200);
      expect((await call("GET", "/v1/outputs/b-1", ENV.IDEM_TOKEN_BETA)).http).toBe(200);
      expect(await journal.outputs.get("a-2")).toBeUndefined();
      expect((await journal.status()).outputs).toBe(2);
    } finally {
      await api.close();
      await journal.close();
    }
  });

  it("refuse to start the built executor when an agent's token variable is unset: exit 2 naming the key", async () => {
    await using dir = await tempDir("idem-cred-cli-");
    const file = join(dir.path, "idem.config.json");
    writeFileSync(file, JSON.stringify(RAW));
    const r = await run(process.execPath, [IDEM_BIN, "executor", "--config", file], {
      env: { ...process.env, IDEM_TOKEN_ALPHA: ENV.IDEM_TOKEN_ALPHA, NATS_URL: "" },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((r as { code?: number }).code).toBe(2);
    expect(r.stderr).toContain("credentials.beta.tokenEnv");
    expect(r.stderr).toContain("IDEM_TOKEN_BETA");
    expect(r.stderr).not.toContain(ENV.IDEM_TOKEN_ALPHA);
  });

  it("hold alpha's NATS user to its own subject (the server refuses another's) and its subject to its grant", async () => {
    await using dir = await tempDir("idem-cred-nats-");
    const conf = join(dir.path, "nats.conf");
    // One user per agent, publishing only on its own submit subject and reading only its own
    // inbox; the executor's user may do everything (docs/security.md, "Over NATS").
    const agentUser = (name: string) =>
      `{ user: ${name}, password: ${name}-pass, permissions: { publish: { allow: ["${PREFIX}.submit.${name}"] }, subscribe: { allow: ["_INBOX_${name}.>"] } } }`;
    writeFileSync(
      conf,
      `authorization { users = [\n { user: executor, password: executor-pass }\n ${agentUser("alpha")}\n ${agentUser("beta")}\n] }\n`,
    );
    await using nats = await startNatsServer({ args: ["-c", conf] });
    const url = (user: string) => nats.url.replace("nats://", `nats://${user}:${user}-pass@`);
    const config = configIn(dir.path, {
      nats: { url: url("executor"), subjectPrefix: PREFIX, stream: "CRED_JOBS" },
    });
    const journal = await openSqliteJournal(config.journal.path);
    const executor = createExecutor({ config, journal, agents: [], logger: silentLogger() });
    await executor.start();
    const agentNc = (name: string) =>
      connect({
        servers: nats.url,
        user: name,
        pass: `${name}-pass`,
        inboxPrefix: `_INBOX_${name}`,
      });
    const alpha = await agentNc("alpha");
    try {
      await journal.jobs.enqueue({ jobId: "a-1", agent: "alpha", input: {} });
      await journal.jobs.enqueue({ jobId: "b-1", agent: "beta", input: {} });
      const ask = async (subject: string, body: unknown) =>
        seen(
          (await alpha.request(subject, JSON.stringify(body), { timeout: 30_000 })).json<unknown>(),
        );
      // The server itself refuses alpha a publish on beta's subject: no responder sees it.
      await expect(
        alpha.request(`${PREFIX}.submit.beta`, JSON.stringify(output("b-1", "beta")), {
          timeout: 5_000,
        }),
      ).rejects.toThrow(/permissions violation/i);
      await expect(
        alpha.request(`${PREFIX}.submit`, JSON.stringify(output("b-1", "beta")), {
          timeout: 5_000,
        }),
      ).rejects.toThrow(/permissions violation/i);
      const own = `${PREFIX}.submit.alpha`;
      expect(await ask(own, output("b-1", "beta"))).toEqual({
        status: "forbidden",
        paths: ["agent"],
      });
      expect(await ask(own, output("b-1", "alpha"))).toEqual({
        status: "invalid",
        paths: ["agent"],
      });
      expect(await ask(own, output("a-1", "alpha", "secrets"))).toEqual({
        status: "forbidden",
        paths: ["effects.0.root"],
      });
      expect(await journal.outputs.get("b-1")).toBeUndefined();
      expect(await ask(own, output("a-1", "alpha"))).toEqual({ status: "recorded" });
      expect((await journal.outputs.get("a-1"))?.source).toBe("nats");
    } finally {
      await alpha.close();
      await executor.stop();
      await journal.close();
    }
  });

  it("hold an MCP session opened with alpha's token to alpha's jobs and scope, without the operators' tools", async () => {
    await using dir = await tempDir("idem-cred-mcp-");
    const config = configIn(dir.path);
    const journal = await openSqliteJournal(config.journal.path);
    const kinds = await loadKinds(config);
    const effects = openEffects(config);
    const mcp = await startMcpHttpServer({
      context: {
        config,
        kinds,
        journal,
        actor: "test (mcp)",
        operatorTools: config.mcp.operatorTools,
        effects,
        drafts: new MemoryDraftStore(),
      },
      token: config.api.token,
      credentials: resolveCredentials(config, ENV),
      host: "127.0.0.1",
      port: 0,
      finish: "record",
    });
    const clients: Client[] = [];
    const session = async (token: string, job?: string) => {
      const client = new Client({ name: "credentials-test", version: "1.0.0" });
      const url = job === undefined ? mcp.endpoint : `${mcp.endpoint}?job=${job}`;
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      return client;
    };
    const call = async (client: Client, name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult;
    try {
      await journal.jobs.enqueue({ jobId: "a-1", agent: "alpha", input: {} });
      await journal.jobs.enqueue({ jobId: "b-1", agent: "beta", input: {} });
      const alpha = ENV.IDEM_TOKEN_ALPHA;
      // Beta's job, and a job nobody enqueued, are refused before a session starts.
      await expect(session(alpha, "b-1")).rejects.toThrow(/agent beta's, not alpha's/);
      await expect(session(alpha, "later-1")).rejects.toThrow(/FORBIDDEN/);

      const client = await session(alpha, "a-1");
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("finish");
      expect(names).not.toContain("replay_plan");
      const outside = await call(client, "effect_file_write", write("secrets", "x.txt"));
      expect(outside.isError).toBe(true);
      expect(outside.structuredContent).toMatchObject({
        code: "FORBIDDEN",
        issues: [{ path: "effects.0.root", field: "root" }],
      });
      const inside = await call(client, "effect_file_write", write("outbox", "x.txt"));
      expect(inside.isError, JSON.stringify(inside)).toBeFalsy();
      const finish = await call(client, "finish", { summary: "done" });
      expect(finish.structuredContent).toMatchObject({ status: "recorded", jobId: "a-1" });

      // Bound to no job, the operator's session has the operators' tools; alpha's never.
      const operator = await session(OPERATOR_TOKEN);
      expect((await operator.listTools()).tools.map((t) => t.name)).toContain("replay_plan");
      const unbound = await session(alpha);
      expect((await unbound.listTools()).tools.map((t) => t.name)).not.toContain("replay_plan");
      expect(await journal.outputs.get("b-1")).toBeUndefined();
    } finally {
      for (const c of clients) await c.close();
      await mcp.close();
      await effects.close();
      await journal.close();
    }
  });
});
