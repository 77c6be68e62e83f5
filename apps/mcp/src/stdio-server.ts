import type { Readable, Writable } from "node:stream";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  isInitializeRequest,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpContext } from "./mcp-context.js";
import { createSessionServer, type SessionOptions } from "./session-server.js";

/** The streams a stdio server talks over: the process's own by default. */
export interface StdioStreams {
  stdin?: Readable;
  stdout?: Writable;
}

/** Resolves once `stdin` ends or fails: the client has gone. */
function endOf(stdin: Readable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => resolve();
    stdin.once("end", done);
    stdin.once("close", done);
    stdin.once("error", done);
  });
}

/**
 * Serves one MCP session over stdio (docs/mcp.md, "Over stdio"): newline-delimited JSON-RPC on
 * stdin and stdout, nothing else on stdout. Resolves when the client closes stdin, once the calls
 * in flight have answered (a `finish` recording then completes before the journal is closed).
 * @throws IdemError INVALID_CONFIG when two kinds have the same tool name.
 */
export async function serveMcpStdio(
  context: McpContext,
  options: SessionOptions & StdioStreams,
): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const session = createSessionServer(context, options);
  await session.server.connect(new StdioServerTransport(stdin, options.stdout ?? process.stdout));
  await endOf(stdin);
  await session.settled();
  await session.server.close();
}

/**
 * `idem mcp --connect URL`: a stdio MCP server for a client that starts its servers as commands,
 * relaying every message to the Streamable HTTP endpoint at `url` (an executor's per-job server)
 * with `Authorization: Bearer <token>`, and every answer back. Resolves when stdin ends (the
 * session is then ended at the endpoint). A message the endpoint cannot take is answered as a
 * JSON-RPC error naming why; nothing is staged by it.
 */
export async function bridgeStdioToHttp(
  options: { url: URL; token: string } & StdioStreams,
): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const down = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  const up = new StreamableHTTPClientTransport(options.url, {
    requestInit: { headers: { Authorization: `Bearer ${options.token}` } },
  });
  let initializing: string | number | undefined;
  down.onmessage = (m: JSONRPCMessage) => {
    if (isJSONRPCRequest(m) && isInitializeRequest(m)) initializing = m.id;
    up.send(m).catch((e: unknown) => {
      if (!isJSONRPCRequest(m)) return;
      void down.send({
        jsonrpc: "2.0",
        id: m.id,
        error: { code: -32603, message: `idem mcp --connect: ${(e as Error).message}` },
      });
    });
  };
  up.onmessage = (m: JSONRPCMessage) => {
    // After initialize, every request names the protocol version agreed (MCP-Protocol-Version).
    if (initializing !== undefined && isJSONRPCResultResponse(m) && m.id === initializing) {
      const version = (m.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === "string") up.setProtocolVersion(version);
      initializing = undefined;
    }
    void down.send(m);
  };
  await up.start();
  await down.start();
  await endOf(stdin);
  await up.terminateSession().catch(() => {});
  await up.close();
  await down.close();
}
