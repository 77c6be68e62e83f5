// A journal call whose host is cut off from its PostgreSQL server while the call waits for the
// server's answer ends as UNAVAILABLE by itself (TCP keepalive), instead of waiting forever for an
// answer that can no longer arrive: the lost connection is noticed without any traffic of the
// caller's own. Runs as root (network namespaces).
import { join } from "node:path";
import {
  createNetnsNetwork,
  type NetnsNetwork,
  type PostgresHandle,
  startPostgres,
} from "@idem/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipUnless } from "../../../../test/support/skip.js";
import { lockKey } from "../../src/store/postgres/record.js";

const root = process.getuid?.() === 0;
const CHILD = join(import.meta.dirname, "../fixtures/held-record.mjs");
let net: NetnsNetwork;
let server: PostgresHandle;

beforeAll(async () => {
  if (!root) return;
  net = await createNetnsNetwork();
  server = await startPostgres({ listen: { address: net.address, network: net.network } });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await net?.remove();
});

const AS_ROOT = skipUnless(root, "needs root: network namespaces");

describe("a PostgreSQL journal cut off from its server (runs as root)", AS_ROOT, () => {
  it("answers a call waiting on the server UNAVAILABLE once the network is gone", async () => {
    const host = await net.addHost();
    const holder = new pg.Client({ connectionString: server.url });
    await holder.connect();
    // The record's target lock, held here: the child's record waits on the server, silent.
    await holder.query("SELECT pg_advisory_lock($1, hashtext($2))", [lockKey.target, "root:held"]);
    const url = server.url.replace("127.0.0.1", net.address);
    const child = host.spawn(process.execPath, [CHILD, url, "root:held"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    // Waits until the child's record is blocked on the lock, on the server's side.
    for (;;) {
      const { rows } = await holder.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND client_addr = $1",
        [host.address],
      );
      if (rows[0].n > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await host.cut();
    await exited;
    await holder.end();
    expect(out.trim().split("\n")).toEqual(["ready", "UNAVAILABLE"]);
  }, 180_000);
});
