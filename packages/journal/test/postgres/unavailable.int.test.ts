import { createServer, type Server, Socket } from "node:net";
import { type AgentOutput, isIdemError } from "@idem/schema";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresConnection } from "../../src/store/postgres/connection.js";
import { PostgresJournalStore } from "../../src/store/postgres/postgres-journal-store.js";
import { isConnectionLoss } from "../../src/store/postgres/unavailable.js";

const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  summary: "wrote it",
  effects: [{ kind: "file.write", root: "out", path: `${jobId}.txt`, content: "x" }],
});

/**
 * A TCP proxy in front of the server that, once armed, passes the next message naming `marker`
 * on (a COMMIT, or a named statement that is a transaction of its own) and then cuts both sockets
 * when the server answers it: the transaction committed, its answer is lost.
 */
async function commitCutter(
  port: number,
): Promise<{ port: number; arm(marker: string): void; close(): void }> {
  let armed: string | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    let cutting = false;
    upstream.connect(port, "127.0.0.1");
    client.on("data", (chunk: Buffer) => {
      if (armed !== undefined && chunk.includes(armed)) {
        armed = undefined;
        cutting = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (cutting) {
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on("error", () => {});
      s.on("close", () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no proxy port");
  return {
    port: address.port,
    arm: (marker) => {
      armed = marker;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe("PostgreSQL only (SQLite has no server to lose): connection loss is UNAVAILABLE, and only that", () => {
  let server: PostgresHandle;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers UNAVAILABLE while the server is killed, and works again once it is back", async () => {
    const url = await server.createDatabase("unavailable_killed");
    const c = await PostgresConnection.open(url, { max: 2 });
    try {
      expect(await c.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
      await server.kill();
      for (const call of [() => c.query("SELECT 1"), () => c.tx((cl) => cl.query("SELECT 1"))]) {
        const e = await call().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(isIdemError(e, "UNAVAILABLE")).toBe(true);
        expect((e as Error).message).toContain(c.location);
      }
      await server.restart();
      // The pool reconnects by itself: the first calls after the restart may still fail.
      let back = false;
      for (let i = 0; i < 100 && !back; i++) {
        back = await c.query("SELECT 1").then(
          () => true,
          (e: unknown) => {
            if (!isIdemError(e, "UNAVAILABLE")) throw e;
            return new Promise<boolean>((r) => setTimeout(() => r(false), 100));
          },
        );
      }
      expect(back).toBe(true);
    } finally {
      await c.close();
    }
  });

  it("answers UNAVAILABLE for an administrator's shutdown of the session (57P01)", async () => {
    const url = await server.createDatabase("unavailable_terminated");
    const c = await PostgresConnection.open(url, { max: 1 });
    try {
      const e = await c
        .tx((cl) => cl.query("SELECT pg_terminate_backend(pg_backend_pid())"))
        .catch((err: unknown) => err);
      expect(isIdemError(e, "UNAVAILABLE")).toBe(true);
      expect(await c.query("SELECT 2 AS two")).toEqual([{ two: 2 }]);
    } finally {
      await c.close();
    }
  });

  it("lets a syntax error and a constraint violation through as they are", async () => {
    const url = await server.createDatabase("unavailable_not");
    const c = await PostgresConnection.open(url, { max: 1 });
    try {
      const syntax = await c.query("SELEC 1").catch((err: unknown) => err);
      expect(syntax).toBeInstanceOf(pg.DatabaseError);
      expect((syntax as pg.DatabaseError).code).toBe("42601");
      expect(isConnectionLoss(syntax)).toBe(false);
      await c.query("CREATE TABLE t (k text PRIMARY KEY)");
      await c.query("INSERT INTO t VALUES ('a')");
      const unique = await c
        .tx((cl) => cl.query("INSERT INTO t VALUES ('a')"))
        .catch((err: unknown) => err);
      expect(unique).toBeInstanceOf(pg.DatabaseError);
      expect((unique as pg.DatabaseError).code).toBe("23505");
      expect(isIdemError(unique)).toBe(false);
      const thrown = new Error("Connection refused by policy");
      expect(isConnectionLoss(thrown)).toBe(false);
    } finally {
      await c.close();
    }
  });

  it("a record whose COMMIT answer was lost is UNAVAILABLE, and retried it is a duplicate of the one committed", async () => {
    const url = await server.createDatabase("unavailable_commit");
    // Migrated directly, so the proxy sees only the journal's own transactions.
    await (await PostgresJournalStore.open(url)).close();
    const proxy = await commitCutter(Number(new URL(url).port));
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    const j = await PostgresJournalStore.open(viaProxy.toString());
    try {
      // A record is one statement (named idem_record), committed when the server answers it.
      proxy.arm("idem_record");
      const lost = await j.outputs
        .record(out("c-1"), { source: "executor", targets: ["file:out"] })
        .catch((err: unknown) => err);
      expect(isIdemError(lost, "UNAVAILABLE")).toBe(true);
      const again = await j.outputs.record(out("c-1"), { source: "executor", targets: [] });
      expect(again.status).toBe("duplicate");
      expect((await j.outputs.get("c-1"))?.output).toEqual(out("c-1"));
    } finally {
      await j.close();
      proxy.close();
    }
  });
});
