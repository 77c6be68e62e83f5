import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./nats-server.js";
import { watchParent } from "./watchdog.js";

/** Debian's PgBouncer (`apt-get install pgbouncer`). */
export const PGBOUNCER = "/usr/sbin/pgbouncer";

/**
 * A PgBouncer of the test's own in front of a PostgreSQL server, on a free loopback port: every
 * database of the server by its name, `trust` for the users it is given, and the pool mode asked
 * (transaction pooling by default, as most deployments run it). Startup parameters it does not
 * track are refused, as its default config does.
 */
export interface PgBouncerHandle extends AsyncDisposable {
  readonly port: number;
  /** The PID of the pgbouncer process this handle started. */
  readonly pid: number;
  /** `url` (a URL of the server) with its host and port replaced by PgBouncer's. */
  through(url: string): string;
  /** Its log so far (what it refused, and why). */
  log(): Promise<string>;
  /** Stops it (SIGTERM by its PID, then SIGKILL) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

export interface StartPgBouncerOptions {
  /** The PostgreSQL server's port on 127.0.0.1. */
  serverPort: number;
  poolMode?: "session" | "transaction" | "statement";
  /** The users it lets in without a password (trust). Default `["postgres"]`. */
  users?: string[];
  /** How long to wait for it to listen. Default 30 s. */
  readyTimeoutMs?: number;
}

const isRoot = () => process.getuid?.() === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether something accepts connections on 127.0.0.1:port. */
const listening = (port: number) =>
  new Promise<boolean>((done) => {
    const s = connect({ host: "127.0.0.1", port }, () => {
      s.destroy();
      done(true);
    });
    s.on("error", () => done(false));
  });

/** Starts PgBouncer (it refuses to run as root: as root, it runs as the `postgres` user). */
export async function startPgBouncer(options: StartPgBouncerOptions): Promise<PgBouncerHandle> {
  if (!existsSync(PGBOUNCER))
    throw new Error(`no PgBouncer at ${PGBOUNCER} (apt-get install pgbouncer)`);
  const dir = await mkdtemp(join(tmpdir(), "idem-pgbouncer-"));
  await chmod(dir, 0o777);
  const port = await freePort();
  const users = options.users ?? ["postgres"];
  const logFile = join(dir, "pgbouncer.log");
  await writeFile(join(dir, "users.txt"), users.map((u) => `"${u}" ""\n`).join(""));
  await writeFile(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=127.0.0.1 port=${options.serverPort}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      `pool_mode = ${options.poolMode ?? "transaction"}`,
      "max_client_conn = 200",
      "default_pool_size = 10",
      `logfile = ${logFile}`,
      "",
    ].join("\n"),
  );
  const [bin, args] = isRoot()
    ? ["setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", PGBOUNCER]]
    : [PGBOUNCER, []];
  const child: ChildProcess = spawn(bin, [...args, join(dir, "pgbouncer.ini")], {
    stdio: "ignore",
  });
  const pid = child.pid ?? -1;
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  const log = () => readFile(logFile, "utf8").catch(() => "");
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (!exited) {
      child.kill("SIGTERM");
      const deadline = Date.now() + 10_000;
      while (!exited && Date.now() < deadline) await sleep(25);
      if (!exited) child.kill("SIGKILL");
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  while (!(await listening(port))) {
    if (exited || Date.now() > deadline) {
      const text = await log();
      await stop();
      throw new Error(`PgBouncer did not listen on ${port}:\n${text.slice(-4000)}`);
    }
    await sleep(50);
  }
  watchParent(pid, dir);
  return {
    port,
    pid,
    through(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    log,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
