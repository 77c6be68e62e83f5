// The Streamable HTTP sessions of `idem mcp --http`: clients that never end their session (the SDK's
// `client.close()` sends no DELETE) cannot fill the endpoint, 200 of them in a row leave it
// answering the next; the registry's rules in process with a manual clock (idle sessions reaped in
// minutes, the least recently used evicted before anyone is refused, a client's own first, a
// session with a call in flight never); and a session bound to a job never has an operator's tools.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionLimits } from "@idem/mcp";
import { tempDir } from "@idem/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { SessionRegistry } from "../src/session-registry.js";
import { IDEM_BIN, startIdem, writeConfig } from "./helpers.js";

beforeAll(() => {
  if (!existsSync(IDEM_BIN.replace("bin/idem.js", "dist/main.js")))
    throw new Error("build the CLI first (npm run build)");
});

const OPERATOR_TOOLS = ["replay_plan", "audit", "dead_letters", "replay", "resolve"];

describe("idem mcp --http's sessions", () => {
  it("stays open to the next client after 200 one-shot clients that never end their sessions; a job's session has no operator tools, an unbound one has them", async () => {
    await using dir = await tempDir("idem-mcp-sessions-");
    writeConfig(dir.path);
    const file = join(dir.path, "idem.config.json");
    const config = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...config, mcp: { operatorTools: "write" } }));
    await using server = startIdem(dir.path, ["mcp", "--http", "--port", "0"]);
    const endpoint = (await server.waitFor(/idem mcp: (http:\/\/\S+\/mcp)/))[1] as string;
    const connect = async (query = "") => {
      const client = new Client({ name: "one-shot", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${endpoint}${query}`)));
      return client;
    };

    for (let i = 0; i < 200; i++) {
      const client = await connect();
      const r = (await client.callTool({
        name: "journal_status",
        arguments: {},
      })) as CallToolResult;
      expect(r.isError, `client ${i}`).toBeFalsy();
      await client.close(); // no DELETE: the session stays open at the server
    }

    const job = await connect("?job=next-1&agent=writer");
    try {
      const names = (await job.listTools()).tools.map((t) => t.name);
      expect(names).toContain("finish");
      for (const t of OPERATOR_TOOLS) expect(names).not.toContain(t);
      const refused = await job
        .callTool({ name: "replay", arguments: { all: true, reason: "from a job" } })
        .catch((e: { code?: number }) => e);
      expect(refused).toMatchObject({ code: -32602 });
    } finally {
      await job.close();
    }
    const operator = await connect();
    try {
      const names = (await operator.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(OPERATOR_TOOLS));
    } finally {
      await operator.close();
    }
    expect(server.output()).toContain("evicted");
  });
});

describe("SessionRegistry", () => {
  const limits: SessionLimits = { maxSessions: 4, maxPerClient: 2, idleMs: 300_000 };
  const session = (client: string, busy = false) => {
    const s = {
      client,
      closed: false,
      busy: () => busy,
      close: async () => {
        s.closed = true;
      },
    };
    return s;
  };

  it("reaps a session idle for minutes, never one with a call in flight", async () => {
    let now = 0;
    const registry = new SessionRegistry(limits, undefined, () => now);
    const idle = session("a");
    const busy = session("a", true);
    registry.add("idle", idle);
    registry.add("busy", busy);
    now = 299_999;
    await registry.reap();
    expect(registry.size).toBe(2);
    now = 300_000;
    await registry.reap();
    expect(idle.closed).toBe(true);
    expect(busy.closed).toBe(false);
    expect(registry.use("idle")).toBeUndefined();
    await registry.closeAll();
  });

  it("makes room by ending a client's own least recently used session first, then the least recently used of all; refuses only when every one is busy", async () => {
    let now = 0;
    const registry = new SessionRegistry(limits, undefined, () => now);
    const a1 = session("a");
    const a2 = session("a");
    registry.add("a1", a1);
    now++;
    registry.add("a2", a2);
    now++;
    registry.use("a1"); // a2 is now a's least recently used
    // Client a at its share: its own oldest goes, no one else's.
    expect(await registry.makeRoom("a")).toBe(true);
    expect(a2.closed).toBe(true);
    expect(a1.closed).toBe(false);
    const others = ["b", "c", "d"].map((c) => session(c));
    others.forEach((s, i) => {
      now++;
      registry.add(`s${i}`, s);
    });
    // Full (4): the least recently used of all goes (a1, used before the others were added).
    expect(await registry.makeRoom("e")).toBe(true);
    expect(a1.closed).toBe(true);
    expect(registry.size).toBe(3);
    await registry.closeAll();

    const full = new SessionRegistry(limits, undefined, () => now);
    for (const c of ["w", "x", "y", "z"]) full.add(c, session(c, true));
    expect(await full.makeRoom("new")).toBe(false);
    await full.closeAll();
  });
});
