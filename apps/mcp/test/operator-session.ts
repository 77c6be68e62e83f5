// An operator's session of `idem mcp` over stdio, as the MCP SDK's client opens it, for the suites
// of the operators' tools.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { cleanEnv, IDEM_BIN } from "./helpers.js";

/** Calls one tool of the session. */
export type Call = (name: string, a?: Record<string, unknown>) => Promise<CallToolResult>;

/** Runs `body` with an SDK client over stdio on `idem mcp <args>` in `dir` (actor `oncall`). */
export async function withSession<T>(
  dir: string,
  args: string[],
  body: (call: Call, client: Client) => Promise<T>,
): Promise<T> {
  const env = Object.fromEntries(
    Object.entries(cleanEnv({ IDEM_ACTOR: "oncall" })).filter(
      (e): e is [string, string] => typeof e[1] === "string",
    ),
  );
  const client = new Client({ name: "ops-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [IDEM_BIN, "mcp", ...args],
      cwd: dir,
      env,
      stderr: "pipe",
    }),
  );
  try {
    return await body(
      async (name, a = {}) => (await client.callTool({ name, arguments: a })) as CallToolResult,
      client,
    );
  } finally {
    await client.close();
  }
}

/** Sets `mcp.operatorTools` in the config of `dir`. */
export const setOperatorTools = (dir: string, value: string): void => {
  const file = join(dir, "idem.config.json");
  const config = JSON.parse(readFileSync(file, "utf8"));
  config.mcp = { operatorTools: value };
  writeFileSync(file, JSON.stringify(config));
};
