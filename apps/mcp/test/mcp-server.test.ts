// `idem mcp` (the built CLI) driven by the MCP SDK's own client, over stdio and over Streamable
// HTTP: the tools are the registry's kinds (the config's own too), an invalid effect is a tool
// error naming its field, a finished output is recorded once, and a second finish is a duplicate.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { tempDir } from "@idem/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN, idem, idemJson, startIdem, writeConfig } from "./helpers.js";

const JOB_TOOLS = ["finish", "job_input", "job_output", "journal_status"];
const TOKEN = "mcp-test-token";

beforeAll(() => {
  if (!existsSync(IDEM_BIN.replace("bin/idem.js", "dist/main.js")))
    throw new Error("build the CLI first (npm run build)");
});

/**
 * The tools of the helpers' config: a tool per kind it gives something to act on (the `outbox`
 * root; `test.note` names no aliases), none for git, NATS or HTTP (no repo, publish or HTTP
 * target), then the job's tools.
 */
const EXPECTED_TOOLS = ["effect_file_write", "effect_test_note", ...JOB_TOOLS].sort();

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

/** Every string-valued variable of the test's environment, as a stdio client passes it on. */
const childEnv = (): Record<string, string> =>
  Object.fromEntries(
    Object.entries(cleanEnv()).filter((e): e is [string, string] => typeof e[1] === "string"),
  );

/**
 * What both transports must do with one session on `jobId`: list the registry's tools, refuse two
 * invalid effects naming their fields, stage two valid ones with their keys, record on finish,
 * and answer a second finish as a duplicate.
 */
async function exercise(client: Client, jobId: string): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(EXPECTED_TOOLS);
  const note = tools.find((t) => t.name === "effect_test_note");
  expect(note?.description).toContain("Keeps a short note in the test's folder.");
  expect(note?.description).toContain("exactly once in effect");
  expect(note?.inputSchema.properties).toHaveProperty("text");
  expect(note?.inputSchema.properties).not.toHaveProperty("kind");

  const outside = await call(client, "effect_file_write", {
    root: "outbox",
    path: "../escape.txt",
    content: "x",
  });
  expect(outside.isError).toBe(true);
  expect(outside.structuredContent).toMatchObject({
    code: "INVALID_INPUT",
    issues: [{ path: "effects.0.path", field: "path" }],
  });
  const empty = await call(client, "effect_test_note", { text: "" });
  expect(empty.isError).toBe(true);
  expect(empty.structuredContent).toMatchObject({
    issues: [{ path: "effects.0.text", field: "text" }],
  });

  const write = await call(client, "effect_file_write", {
    root: "outbox",
    path: `${jobId}.md`,
    content: `# ${jobId}\n`,
  });
  expect(write.isError, JSON.stringify(write)).toBeFalsy();
  expect(write.structuredContent).toMatchObject({
    key: `${jobId}/0`,
    kind: "file.write",
    staged: 1,
  });
  const staged = await call(client, "effect_test_note", { text: `note of ${jobId}` });
  expect(staged.structuredContent).toMatchObject({ key: `${jobId}/1`, staged: 2 });

  const first = await call(client, "finish", { summary: "a page and a note" });
  expect(first.isError, JSON.stringify(first)).toBeFalsy();
  expect(first.structuredContent).toMatchObject({
    status: "recorded",
    jobId,
    keys: [`${jobId}/0`, `${jobId}/1`],
  });
  const again = await call(client, "finish", { summary: "a page and a note" });
  expect(again.isError).toBeFalsy();
  expect(again.structuredContent).toMatchObject({ status: "duplicate", jobId });
  const late = await call(client, "effect_test_note", { text: "too late" });
  expect(late.isError).toBe(true);

  const output = await call(client, "job_output", {});
  expect(output.structuredContent).toMatchObject({
    recorded: { output: { jobId, source: "mcp" } },
    draft: { keys: [], finished: true, recorded: true },
  });
}

/**
 * The journal holds one output for `jobId`, as staged (and `rejected` conflicting ones beside it);
 * the interpreter applies its effects.
 */
async function recordedOnce(dir: string, jobId: string, rejected = 0): Promise<void> {
  const shown = await idemJson<{
    output: { source: string; output: { summary: string; effects: { kind: string }[] } };
    rejections: unknown[];
  }>(dir, ["show", jobId]);
  expect(shown.output.source).toBe("mcp");
  expect(shown.output.output.summary).toBe("a page and a note");
  expect(shown.output.output.effects.map((e) => e.kind)).toEqual(["file.write", "test.note"]);
  expect(shown.rejections).toHaveLength(rejected);
  const interpreted = await idem(dir, ["interpreter", "--once"]);
  expect(interpreted.code, interpreted.stderr).toBe(0);
  expect(readFileSync(join(dir, "outbox", `${jobId}.md`), "utf8")).toBe(`# ${jobId}\n`);
  expect(readFileSync(join(dir, "notes", `${jobId}_1.txt`), "utf8")).toBe(`note of ${jobId}`);
}

describe("idem mcp over stdio", () => {
  it("serves the registry's kinds as tools, refuses an invalid effect naming the field, records a finished output once and answers a second finish duplicate", async () => {
    await using dir = await tempDir("idem-mcp-stdio-");
    writeConfig(dir.path);
    const client = new Client({ name: "idem-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [IDEM_BIN, "mcp", "--job", "page-1", "--agent", "writer"],
        cwd: dir.path,
        env: childEnv(),
        stderr: "pipe",
      }),
    );
    try {
      expect(client.getServerVersion()?.name).toBe("idem");
      expect(client.getInstructions()).toContain("page-1");
      // A job the journal never enqueued (--job with --agent): the model is not sent to
      // job_input, which answers that idem has no input for it rather than an error.
      expect(client.getInstructions()).not.toContain("job_input");
      const input = await call(client, "job_input", {});
      expect(input.isError).toBeFalsy();
      expect(input.structuredContent).toEqual({ jobId: "page-1", agent: "writer", input: null });
      await exercise(client, "page-1");
    } finally {
      await client.close();
    }
    await recordedOnce(dir.path, "page-1");
    const status = await idemJson<{ outputs: number; rejections: number }>(dir.path, ["status"]);
    expect(status).toMatchObject({ outputs: 1, rejections: 0 });
  });

  it("prints a client's mcpServers entry with absolute paths that starts without any PATH (a desktop client's)", async () => {
    await using dir = await tempDir("idem-mcp-client-config-");
    writeConfig(dir.path);
    const r = await idem(dir.path, [
      "mcp",
      "--client-config",
      "--job",
      "desk-1",
      "--agent",
      "writer",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as {
      mcpServers: { idem: { command: string; args: string[] } };
    };
    const { command, args } = printed.mcpServers.idem;
    expect(isAbsolute(command)).toBe(true);
    expect(isAbsolute(args[0] as string)).toBe(true);
    expect(args.slice(1)).toEqual([
      "mcp",
      "--config",
      join(realpathSync(dir.path), "idem.config.json"),
      "--job",
      "desk-1",
      "--agent",
      "writer",
    ]);
    // Started as a desktop client starts it: elsewhere, with no PATH at all.
    const child = spawn(command, args, { cwd: "/", env: {}, stdio: ["pipe", "pipe", "pipe"] });
    const answer = new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("\n")) resolve(out);
      });
      child.on("error", reject);
      child.on("exit", () => reject(new Error(`exited before answering: ${out}`)));
    });
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "desktop", version: "1" } } })}\n`,
    );
    expect(JSON.parse(await answer)).toMatchObject({
      id: 1,
      result: { serverInfo: { name: "idem" } },
    });
    child.stdin.end();
    await new Promise((r) => child.once("close", r));
  });

  it("refuses a job it cannot bind: a malformed ID, or one the journal does not know without --agent (exit 2)", async () => {
    await using dir = await tempDir("idem-mcp-refusals-");
    writeConfig(dir.path);
    const unknown = await idem(dir.path, ["mcp", "--job", "nobody-knows"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("agent");
    const bad = await idem(dir.path, ["mcp", "--job", "../x", "--agent", "writer"]);
    expect(bad.code).toBe(2);
  });
});

describe("idem mcp --http", () => {
  it("serves each session's job behind api.token: the same tools and records, and a recorded job's staging refused at once", async () => {
    await using dir = await tempDir("idem-mcp-http-");
    writeConfig(dir.path, { api: { token: TOKEN } });
    await using server = startIdem(dir.path, ["mcp", "--http", "--port", "0"]);
    const endpoint = (await server.waitFor(/idem mcp: (http:\/\/\S+\/mcp)/))[1] as string;
    const connect = async (query: string, token = TOKEN) => {
      const client = new Client({ name: "idem-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${endpoint}${query}`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    };
    await expect(connect("", "wrong-token")).rejects.toThrow();

    const client = await connect("?job=page-2&agent=writer");
    try {
      await exercise(client, "page-2");
    } finally {
      await client.close();
    }
    // Another session on the recorded job: staging is refused at once (first write wins), a
    // finish with the same summary is a duplicate and with another a conflict.
    const other = await connect("?job=page-2&agent=writer");
    try {
      const late = await call(other, "effect_test_note", { text: "another note" });
      expect(late.isError).toBe(true);
      expect(late.structuredContent).toMatchObject({ status: "conflict", code: "OUTPUT_CONFLICT" });
      const same = await call(other, "finish", { summary: "a page and a note" });
      expect(same.structuredContent).toMatchObject({ status: "duplicate", jobId: "page-2" });
      const conflict = await call(other, "finish", { summary: "something else" });
      expect(conflict.isError).toBe(true);
      expect(conflict.structuredContent).toMatchObject({ status: "conflict", jobId: "page-2" });
    } finally {
      await other.close();
    }
    // A session bound to no job lists the tools and refuses to stage.
    const unbound = await connect("");
    try {
      const r = await call(unbound, "effect_test_note", { text: "for whom?" });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ code: "INVALID_STATE" });
      expect((await call(unbound, "journal_status", {})).structuredContent).toMatchObject({
        outputs: 1,
        rejections: 0,
      });
    } finally {
      await unbound.close();
    }
    await recordedOnce(dir.path, "page-2");
  });

  it("applies the API's browser guards: a cross-site request is refused, and without a token a Host that is not loopback", async () => {
    await using dir = await tempDir("idem-mcp-guards-");
    writeConfig(dir.path);
    await using server = startIdem(dir.path, ["mcp", "--http", "--port", "0"]);
    const endpoint = (await server.waitFor(/idem mcp: (http:\/\/\S+\/mcp)/))[1] as string;
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "curl", version: "1" },
      },
    };
    const post = (headers: Record<string, string>) =>
      fetch(endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(initialize),
      });
    const crossSite = await post({ origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    await crossSite.body?.cancel();
    const fetched = await post({ "sec-fetch-site": "cross-site" });
    expect(fetched.status).toBe(403);
    await fetched.body?.cancel();
    // fetch sets Host from the URL: a rebound name is sent through a raw request instead.
    const { request } = await import("node:http");
    const url = new URL(endpoint);
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: { host: "evil.example:80", "content-type": "application/json" },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify(initialize));
    });
    expect(rebound).toBe(421);
    const fine = await post({});
    expect(fine.status).toBe(200);
    await fine.body?.cancel();
  });

  it("refuses to listen beyond loopback without api.token (exit 2), as the API does", async () => {
    await using dir = await tempDir("idem-mcp-listen-");
    writeConfig(dir.path);
    const r = await idem(dir.path, ["mcp", "--http", "--host", "0.0.0.0", "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("api.token");
  });
});
