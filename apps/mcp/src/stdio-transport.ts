import type { Readable, Writable } from "node:stream";
import type { Logger } from "@idem/runtime";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** How much of an oversized message is kept to find its request ID: its first and last bytes. */
const EDGE = 512;

type RequestId = string | number;

/**
 * The ID of a request from the edges of its text, for the answer to a message too large to read:
 * the top-level `"id"` first (`{"jsonrpc":"2.0","id":7,…`) or last (`…,"id":7}`, as the SDK's
 * client writes it). A nested `"id"` ends with more than one `}` and is not taken. Null when
 * neither edge names one, as JSON-RPC answers a request whose ID cannot be read.
 */
function requestIdOf(head: string, tail: string): RequestId | null {
  const value = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")`;
  const first = new RegExp(
    String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}\s*,`,
  ).exec(head);
  const last = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  const raw = first?.[1] ?? last?.[1];
  if (raw === undefined) return null;
  try {
    return JSON.parse(raw) as RequestId;
  } catch {
    return null;
  }
}

/**
 * The stdio transport of `idem mcp` (docs/mcp.md, "Over stdio"): newline-delimited JSON-RPC on
 * `stdin` and `stdout`, as the SDK's `StdioServerTransport`, but a message is never the end of the
 * session. One longer than `maxMessageBytes` is skipped as it streams in (never buffered whole)
 * and answered with a JSON-RPC error (-32000, its request's ID when its edges name one), and
 * logged; a line that is not JSON is answered -32700, one that is not a JSON-RPC message -32600,
 * as JSON-RPC says. Then the next message is read as usual.
 */
export class BoundedStdioTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onerror?: Transport["onerror"];
  onclose?: Transport["onclose"];

  private chunks: Buffer[] = [];
  private size = 0;
  /** Set while an oversized message is skipped: its first bytes and its latest ones. */
  private skipping: { head: string; tail: string; bytes: number } | undefined;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly maxMessageBytes: number,
    private readonly logger?: Logger | undefined,
  ) {}

  private readonly ondata = (chunk: Buffer) => {
    let rest = chunk;
    for (;;) {
      const nl = rest.indexOf(0x0a);
      const part = nl === -1 ? rest : rest.subarray(0, nl);
      this.take(part);
      if (nl === -1) return;
      this.endLine();
      rest = rest.subarray(nl + 1);
    }
  };

  private readonly onerror_ = (e: Error) => this.onerror?.(e);

  /** Adds the bytes of the current line: kept while within the limit, else only its edges. */
  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (!this.skipping && this.size + part.length <= this.maxMessageBytes) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    if (!this.skipping) {
      const kept = Buffer.concat(this.chunks);
      this.skipping = { head: kept.subarray(0, EDGE).toString("utf8"), tail: "", bytes: this.size };
      this.chunks = [];
      this.size = 0;
      if (this.skipping.head.length < EDGE)
        this.skipping.head += part.subarray(0, EDGE - this.skipping.head.length).toString("utf8");
    }
    this.skipping.bytes += part.length;
    this.skipping.tail = (this.skipping.tail + part.subarray(-EDGE).toString("utf8")).slice(-EDGE);
  }

  private endLine(): void {
    const skipped = this.skipping;
    const line = Buffer.concat(this.chunks).toString("utf8").replace(/\r$/, "");
    this.chunks = [];
    this.size = 0;
    this.skipping = undefined;
    if (skipped) {
      this.refuseOversized(skipped);
      return;
    }
    if (line.trim() === "") return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.answerError(null, -32700, "Parse error: a line on stdin is not JSON");
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const id = (raw as { id?: unknown } | null)?.id;
      const known = typeof id === "string" || typeof id === "number" ? id : null;
      this.answerError(known, -32600, "Invalid Request: not a JSON-RPC 2.0 message");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private refuseOversized(skipped: { head: string; tail: string; bytes: number }): void {
    const id = requestIdOf(skipped.head, skipped.tail);
    this.logger?.warn(
      { bytes: skipped.bytes, limit: this.maxMessageBytes, id },
      "MCP message over the size limit refused",
    );
    this.answerError(
      id,
      -32000,
      `message of ${skipped.bytes} bytes refused: the limit is ${this.maxMessageBytes} bytes (twice limits.maxOutputBytes, at least 4 MiB; docs/mcp.md)`,
    );
  }

  private answerError(id: RequestId | null, code: number, message: string): void {
    // JSON-RPC answers a message whose ID cannot be read with `id: null`; the SDK's types have no
    // such message, so it is written as is.
    this.write({ jsonrpc: "2.0", id, error: { code, message } }).catch((e: unknown) =>
      this.onerror?.(e as Error),
    );
  }

  /** At the end of stdin, a last message without its newline is read as if it had one. */
  private readonly onend = () => {
    if (this.size > 0 || this.skipping) this.endLine();
  };

  async start(): Promise<void> {
    this.stdin.on("data", this.ondata);
    this.stdin.on("error", this.onerror_);
    this.stdin.once("end", this.onend);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  private write(message: unknown): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stdout.write(`${JSON.stringify(message)}\n`, (e) => (e ? reject(e) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.ondata);
    this.stdin.off("error", this.onerror_);
    this.stdin.off("end", this.onend);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.chunks = [];
    this.onclose?.();
  }
}
