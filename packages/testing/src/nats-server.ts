import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watchParent } from "./watchdog.js";

/** A throwaway nats-server with JetStream on a free loopback port and a temporary store. */
export interface NatsServerHandle extends AsyncDisposable {
  /** `nats://127.0.0.1:<port>`; stays the same across restarts. */
  readonly url: string;
  readonly port: number;
  /** The current process ID (changes on restart). */
  readonly pid: number;
  /** The JetStream store directory, kept across restarts, removed by `stop()`. */
  readonly storeDir: string;
  /** Sends a signal to this server's PID (never by name) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same port and store (after `kill`, or kills it first). */
  restart(): Promise<void>;
  /** Terminates the server and removes its store. Idempotent. */
  stop(): Promise<void>;
}

export interface StartNatsServerOptions {
  /** The nats-server binary; default `nats-server` on PATH. */
  binary?: string;
  /** Extra command line arguments. */
  args?: string[];
  /** How long to wait for the server to accept connections. Default 10 s. */
  readyTimeoutMs?: number;
  /** The address to listen on; default 127.0.0.1 (a drill's bridge address to reach namespaces). */
  host?: string;
}

/** The ports `freePort` handed out in this process: none is handed out twice. */
const handedOut = new Set<number>();

/**
 * Finds a free TCP port on 127.0.0.1 (the OS picks one; a tiny race with other processes remains,
 * as with every such helper). Never one it answered before in this process: ports asked for in a
 * row and bound later (a cluster's client, route and monitor ports) were seen to come back equal,
 * and the node then failed to bind its route port.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await osPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function osPort(): Promise<number> {
  return new Promise<number>((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

function canConnect(port: number, host: string): Promise<boolean> {
  return new Promise((res) => {
    const s = createConnection({ port, host });
    s.once("connect", () => {
      s.destroy();
      res(true);
    });
    s.once("error", () => res(false));
  });
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const c of live) {
      if (c.pid !== undefined && c.exitCode === null) {
        try {
          process.kill(c.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
  });
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((res) => {
    const t = setTimeout(() => res(false), timeoutMs);
    child.once("exit", () => {
      clearTimeout(t);
      res(true);
    });
  });
}

/**
 * Starts `nats-server -js -sd <tmpdir> -p <free port> -a 127.0.0.1` and resolves once it accepts
 * connections. The process is killed by its PID only, on `stop()`, on `await using` disposal and
 * when the test process exits.
 * @throws Error when the server does not come up within `readyTimeoutMs`.
 */
export async function startNatsServer(
  options: StartNatsServerOptions = {},
): Promise<NatsServerHandle> {
  installExitHook();
  const binary = options.binary ?? "nats-server";
  const storeDir = await mkdtemp(join(tmpdir(), "idem-nats-"));
  const port = await freePort();
  const host = options.host ?? "127.0.0.1";
  const readyTimeoutMs = options.readyTimeoutMs ?? 10_000;
  let child: ChildProcess;
  let log = "";
  let stopped = false;

  const launch = async (): Promise<void> => {
    log = "";
    child = spawn(
      binary,
      ["-js", "-sd", storeDir, "-p", String(port), "-a", host, ...(options.args ?? [])],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    live.add(child);
    const c = child;
    if (c.pid !== undefined) watchParent(c.pid, storeDir);
    c.stderr?.on("data", (d: Buffer) => {
      if (log.length < 64_000) log += d.toString();
    });
    c.once("exit", () => live.delete(c));
    const deadline = Date.now() + readyTimeoutMs;
    while (Date.now() < deadline) {
      if (c.exitCode !== null) break;
      if (log.includes("Server is ready") && (await canConnect(port, host))) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    if (c.pid !== undefined && c.exitCode === null) process.kill(c.pid, "SIGKILL");
    throw new Error(`nats-server did not start on port ${port}:\n${log}`);
  };

  const kill = async (signal: NodeJS.Signals = "SIGKILL"): Promise<void> => {
    const c = child;
    if (c.pid === undefined || c.exitCode !== null || c.signalCode !== null) return;
    process.kill(c.pid, signal);
    if (!(await waitExit(c, 10_000)) && c.exitCode === null) {
      process.kill(c.pid, "SIGKILL");
      await waitExit(c, 5_000);
    }
  };

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await kill("SIGTERM");
    await rm(storeDir, { recursive: true, force: true });
  };

  await launch();
  return {
    url: `nats://${host}:${port}`,
    port,
    storeDir,
    get pid() {
      return child.pid ?? -1;
    },
    kill,
    restart: async () => {
      await kill("SIGKILL");
      await launch();
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
