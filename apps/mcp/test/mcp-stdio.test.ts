// `idem mcp` over stdio (the built CLI) as clients really drive it: a shell pipe that writes its
// requests and closes stdin at once gets every answer before the process exits; a cancelled
// finish is recorded but not answered, as the specification says; a message over
// the size limit (11 MiB, beyond the SDK's 10 MiB buffer) is answered with a JSON-RPC error and
// logged, and the session goes on; params that do not fit a method are -32602 naming the field.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tempDir } from "@idem/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN, idem, idemJson, PATIENCE_MS, writeConfig } from "./helpers.js";

beforeAll(() => {
  if (!existsSync(IDEM_BIN.replace("bin/idem.js", "dist/main.js")))
    throw new Error("build the CLI first (npm run build)");
});

interface Answer {
  id: number | string | null;
  result?: { structuredContent?: Record<string, unknown>; isError?: boolean };
  error?: { code: number; message: string };
}

/** Writes `lines` to `idem mcp <args>` in one go, closes stdin, and reads until it exits. */
function pipeAndClose(
  cwd: string,
  args: string[],
  lines: string[],
): Promise<{ code: number | null; answers: Answer[]; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [IDEM_BIN, "mcp", ...args], {
      cwd,
      env: cleanEnv(),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), PATIENCE_MS);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      const answers = stdout
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Answer)
        .filter((m) => "id" in m); // the answers, not the log notifications
      done({ code, answers, stderr });
    });
    child.stdin.end(lines.map((l) => `${l}\n`).join(""));
  });
}

const request = (id: number, method: string, params: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });

describe("idem mcp over stdio", () => {
  it("writes every answer before it exits when the client closes stdin right after its requests, a finish's included; bad params are -32602 without a schema dump", async () => {
    await using dir = await tempDir("idem-mcp-pipe-");
    writeConfig(dir.path);
    const r = await pipeAndClose(
      dir.path,
      ["--job", "piped-1", "--agent", "writer"],
      [
        request(1, "initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "sh", version: "1" },
        }),
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        request(2, "tools/call", { name: 42, arguments: {} }),
        request(3, "tools/call", {
          name: "effect_file_write",
          arguments: { root: "outbox", path: "piped.md", content: "piped\n" },
        }),
        request(4, "tools/call", { name: "finish", arguments: { summary: "piped" } }),
        "this is not JSON",
      ],
    );
    expect(r.code, r.stderr).toBe(0);
    const byId = new Map(r.answers.map((a) => [a.id, a]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 3, 4, null].sort());
    const invalid = byId.get(2)?.error;
    expect(invalid?.code).toBe(-32602);
    expect(invalid?.message).toContain("params.name");
    expect(invalid?.message).not.toMatch(/invalid_type|"expected"|\[\s*\{/);
    expect(byId.get(3)?.result?.structuredContent).toMatchObject({ key: "piped-1/0" });
    expect(byId.get(4)?.result?.structuredContent).toMatchObject({ status: "recorded" });
    expect(byId.get(null)?.error?.code).toBe(-32700);
    const shown = await idemJson<{ output: { source: string } }>(dir.path, ["show", "piped-1"]);
    expect(shown.output.source).toBe("mcp");
  });

  it("records a cancelled finish without answering it, and still exits once it is recorded", async () => {
    await using dir = await tempDir("idem-mcp-cancel-");
    writeConfig(dir.path);
    const r = await pipeAndClose(
      dir.path,
      ["--job", "cancel-1", "--agent", "writer"],
      [
        request(1, "initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "sh", version: "1" },
        }),
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        request(2, "tools/call", {
          name: "effect_file_write",
          arguments: { root: "outbox", path: "c.md", content: "c\n" },
        }),
        request(3, "tools/call", { name: "finish", arguments: { summary: "cancelled" } }),
        JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 3, reason: "the user stopped it" },
        }),
      ],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.answers.map((a) => a.id).sort()).toEqual([1, 2]);
    const shown = await idemJson<{ output: { output: { summary: string } } }>(dir.path, [
      "show",
      "cancel-1",
    ]);
    expect(shown.output.output.summary).toBe("cancelled");
  });

  it("answers a message over the size limit with a JSON-RPC error and a log line, and goes on with the next", async () => {
    await using dir = await tempDir("idem-mcp-big-");
    writeConfig(dir.path);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [IDEM_BIN, "mcp", "--job", "big-1", "--agent", "writer"],
      cwd: dir.path,
      env: Object.fromEntries(
        Object.entries(cleanEnv()).filter((e): e is [string, string] => typeof e[1] === "string"),
      ),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const client = new Client({ name: "big", version: "1" });
    await client.connect(transport);
    try {
      const big = "x".repeat(11 * 1_048_576);
      const refused = await client
        .callTool({
          name: "effect_file_write",
          arguments: { root: "outbox", path: "big.md", content: big },
        })
        .catch((e: { code?: number; message?: string }) => e);
      expect(refused).toMatchObject({ code: -32000 });
      expect((refused as Error).message).toContain("limit");
      const next = (await client.callTool({
        name: "effect_file_write",
        arguments: { root: "outbox", path: "small.md", content: "small\n" },
      })) as CallToolResult;
      expect(next.structuredContent).toMatchObject({ key: "big-1/0", staged: 1 });
    } finally {
      await client.close();
    }
    expect(stderr).toContain("over the size limit");
    // Nothing of the refused message was staged or recorded.
    const status = await idem(dir.path, ["status", "--json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({ outputs: 0 });
  });
});
