import type { Readable, Writable } from "node:stream";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  isInitializeRequest,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { type McpContext, maxMessageBytes } from "./mcp-context.js";
import { guardRequests } from "./request-guard.js";
import { createSessionServer, type SessionOptions } from "./session-server.js";
import { BoundedStdioTransport } from "./stdio-transport.js";

/** The streams a stdio server talks over: the process's own by default. */
export interface StdioStreams {
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * The largest message the relay reads: the endpoint answers 413 beyond its own limit (which the
 * relay passes on as a JSON-RPC error); this only bounds what the relay holds in memory.
 */
const BRIDGE_MAX_BYTES = 64 * 1_048_576;

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
 * stdin and stdout, nothing else on stdout, each message at most {@link maxMessageBytes} (a longer
 * one is answered with a JSON-RPC error and logged; the session goes on). Resolves when the client
 * closes stdin, once every request received has been answered (or cancelled by the client) and
 * the calls in flight have ended: a `finish` recording completes, and its answer is written,
 * before the journal is closed.
 * @throws IdemError INVALID_CONFIG when two kinds have the same tool name; INVALID_STATE when the
 * attempt named was superseded or the job's draft is another agent's.
 */
export async function serveMcpStdio(
  context: McpContext,
  options: SessionOptions & StdioStreams,
): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const session = await createSessionServer(context, options);
  const transport = new BoundedStdioTransport(
    stdin,
    options.stdout ?? process.stdout,
    maxMessageBytes(context.config),
    context.logger,
  );
  const ended = endOf(stdin);
  await session.server.connect(transport);
  const guard = guardRequests(transport);
  await ended;
  await guard.drained();
  await session.settled();
  await session.server.close();
}

/**
 * `idem mcp --connect URL`: a stdio MCP server for a client that starts its servers as commands,
 * relaying every message to the Streamable HTTP endpoint at `url` (an executor's per-job server)
 * with `Authorization: Bearer <token>`, and every answer back. Resolves when stdin ends (the
 * session is then ended at the endpoint), once every request relayed has been answered. A message
 * the endpoint cannot take is answered as a JSON-RPC error naming why; nothing is staged by it.
 */
export async function bridgeStdioToHttp(
  options: { url: URL; token: string } & StdioStreams,
): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const down = new BoundedStdioTransport(stdin, options.stdout ?? process.stdout, BRIDGE_MAX_BYTES);
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
  const ended = endOf(stdin);
  await up.start();
  await down.start();
  const guard = guardRequests(down);
  await ended;
  // Every request relayed is answered before the session ends (a finish in flight included).
  await guard.drained();
  await up.terminateSession().catch(() => {});
  await up.close();
  await down.close();
}
