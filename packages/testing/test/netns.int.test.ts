// A network namespace host (createNetnsHost): a process inside reaches a service bound to the
// host's end of the veth pair, cannot while the host is cut off, and can again once healed.
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNetnsHost, type NetnsHost } from "../src/netns.js";

const root = process.getuid?.() === 0;
let host: NetnsHost;
let server: Server;
let port = 0;

beforeAll(async () => {
  if (!root) return;
  host = await createNetnsHost();
  server = createServer((s) => s.end("pong\n"));
  await new Promise<void>((r) => server.listen(0, host.hostAddress, r));
  const addr = server.address();
  port = typeof addr === "object" && addr ? addr.port : 0;
});
afterAll(async () => {
  server?.close();
  await host?.remove();
});

/** What a node process inside the namespace gets from the service: "pong" or its error code. */
function probe(): Promise<string> {
  const script = `const s=require("node:net").connect(${port},"${host.hostAddress}");
    s.setTimeout(20000,()=>{console.log("ETIMEDOUT");process.exit(0)});
    s.on("data",d=>{console.log(String(d).trim());process.exit(0)});
    s.on("error",e=>{console.log(e.code);process.exit(0)});`;
  const child = host.spawn(process.execPath, ["-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((r) => child.once("exit", () => r(out.trim())));
}

describe.skipIf(!root)("a host in its own network namespace (runs as root)", () => {
  it("reaches the host's services, is cut off by cut() and reaches them again after heal()", async () => {
    expect(await probe()).toBe("pong");
    await host.cut();
    expect(await probe()).toMatch(/^E[A-Z]+$/);
    await host.heal();
    expect(await probe()).toBe("pong");
  }, 120_000);

  it("cannot reach this host's loopback: only what binds the pair's address is reachable", async () => {
    const local = createServer((s) => s.end("pong\n"));
    await new Promise<void>((r) => local.listen(0, "127.0.0.1", r));
    const a = local.address();
    const localPort = typeof a === "object" && a ? a.port : 0;
    const script = `const s=require("node:net").connect(${localPort},"127.0.0.1");
      s.on("data",()=>{console.log("pong");process.exit(0)});
      s.on("error",e=>{console.log(e.code);process.exit(0)});`;
    const child = host.spawn(process.execPath, ["-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    await new Promise((r) => child.once("exit", r));
    local.close();
    expect(out.trim()).toBe("ECONNREFUSED");
  }, 60_000);
});
