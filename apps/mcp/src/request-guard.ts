import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  PingRequestSchema,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";

type RequestId = string | number;

/** The requests the server answers, by method: what their params must be. */
const REQUESTS: Record<string, z.ZodType> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  "logging/setLevel": SetLevelRequestSchema,
};

/** What a guarded transport tells of the requests it passed on. */
export interface RequestGuard {
  /** Resolves once every request received so far is answered or cancelled. */
  drained(): Promise<void>;
}

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } =>
  "method" in m && "id" in m;
const isAnswer = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } =>
  !("method" in m) && "id" in m;

/** Why params do not fit: each field and what is wrong, short (no schema dump). */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const text = issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "(request)"}: ${i.message}`)
    .join("; ");
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/**
 * Stands between a connected transport and the SDK's server (docs/mcp.md, "Errors"): a request of
 * a method the server answers whose params do not fit the method's schema is answered -32602
 * (Invalid params, as JSON-RPC and MCP say) naming each field, and never reaches the server (whose
 * parse would answer -32603 with the schema library's dump). Counts the requests it passed on
 * until each is answered, or cancelled by the client (`notifications/cancelled`: the SDK then
 * sends no answer), so a server can answer them all before it ends.
 * Call it after `server.connect(transport)`.
 */
export function guardRequests(transport: Transport): RequestGuard {
  const inner = transport.onmessage;
  const send = transport.send.bind(transport);
  const pending = new Set<RequestId>();
  let waiters: (() => void)[] = [];
  const settle = (id: RequestId) => {
    pending.delete(id);
    if (pending.size > 0) return;
    const w = waiters;
    waiters = [];
    for (const wake of w) wake();
  };
  transport.onmessage = (message, extra) => {
    if (isRequest(message)) {
      const schema = REQUESTS[message.method];
      const r = schema?.safeParse(message);
      if (r && !r.success) {
        const issues = r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
        void send({
          jsonrpc: "2.0",
          id: message.id,
          error: {
            code: ErrorCode.InvalidParams,
            message: `Invalid params of ${message.method.slice(0, 50)}: ${describeIssues(r.error.issues)}`,
            data: { issues: issues.slice(0, 20) },
          },
        }).catch(() => {});
        return;
      }
      pending.add(message.id);
    } else if ("method" in message && message.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === "string" || typeof id === "number") settle(id);
    }
    inner?.(message, extra);
  };
  transport.send = async (message, options) => {
    try {
      await send(message, options);
    } finally {
      if (isAnswer(message)) settle(message.id);
    }
  };
  return {
    drained: () =>
      pending.size === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r)),
  };
}
