// A drill's network (createNetnsNetwork): a process in a host's namespace reaches a service bound
// to the bridge's address, cannot while its host is cut off, and can again once healed; it never
// reaches this machine's loopback; two hosts reach each other over the bridge.
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipUnless } from "../../../test/support/skip.js";
import { createNetnsNetwork, type NetnsHost, type NetnsNetwork } from "../src/netns.js";

const root = process.getuid?.() === 0;
let net: NetnsNetwork;
let a: NetnsHost;
let b: NetnsHost;
let server: Server;
let port = 0;

beforeAll(async () => {
  if (!root) return;
  net = await createNetnsNetwork();
  a = await net.addHost();
  b = await net.addHost();
  server = createServer((s) => s.end("pong\n"));
  await new Promise<void>((r) => server.listen(0, net.address, r));
  const addr = server.address();
  port = typeof addr === "object" && addr ? addr.port : 0;
});
afterAll(async () => {
  server?.close();
  await net?.remove();
});

/** What a node process inside `host` gets from host:port: "pong" or its error code. */
function probe(from: NetnsHost, address: string, to: number): Promise<string> {
  const script = `const s=require("node:net").connect(${to},"${address}");
    s.setTimeout(20000,()=>{console.log("ETIMEDOUT");process.exit(0)});
    s.on("data",d=>{console.log(String(d).trim());process.exit(0)});
    s.on("error",e=>{console.log(e.code);process.exit(0)});`;
  const child = from.spawn(process.execPath, ["-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((r) => child.once("exit", () => r(out.trim())));
}

const AS_ROOT = skipUnless(root, "needs root: network namespaces");

describe("hosts in network namespaces on a bridge (runs as root)", AS_ROOT, () => {
  it("reach the bridge's services, are cut off by cut() and reach them again after heal()", async () => {
    expect(await probe(a, net.address, port)).toBe("pong");
    expect(await probe(b, net.address, port)).toBe("pong");
    await a.cut();
    expect(await probe(a, net.address, port)).toMatch(/^E[A-Z]+$/);
    expect(await probe(b, net.address, port)).toBe("pong");
    await a.heal();
    expect(await probe(a, net.address, port)).toBe("pong");
  }, 120_000);

  it("cannot reach this machine's loopback: only what binds the bridge is reachable", async () => {
    const local = createServer((s) => s.end("pong\n"));
    await new Promise<void>((r) => local.listen(0, "127.0.0.1", r));
    const addr = local.address();
    const localPort = typeof addr === "object" && addr ? addr.port : 0;
    const got = await probe(a, "127.0.0.1", localPort);
    local.close();
    expect(got).toBe("ECONNREFUSED");
  }, 60_000);
});
