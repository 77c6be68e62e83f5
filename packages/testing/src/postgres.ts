import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./nats-server.js";
import { watchParent } from "./watchdog.js";

const run = promisify(execFile);

/**
 * A throwaway PostgreSQL cluster of its own (Debian's initdb and pg_ctl in a temp dir, on a free
 * loopback port, fsync on), never the machine's own server: every signal goes to the PID its
 * `postmaster.pid` names.
 */
export interface PostgresHandle extends AsyncDisposable {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`; the port stays the same across restarts. */
  readonly url: string;
  readonly port: number;
  /** The cluster's data directory (kept across restarts, removed by `stop()`). */
  readonly dataDir: string;
  /** The postmaster's PID, read from its `postmaster.pid` (changes on restart). */
  readonly pid: number;
  /** Creates a database (for per-test isolation) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** SIGKILLs the postmaster by its PID and waits until it and its backends are gone. */
  kill(): Promise<void>;
  /** Starts the cluster again on the same port and data (after `kill`, or stops it fast first). */
  restart(): Promise<void>;
  /** Stops the cluster (fast shutdown by PID) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Where initdb, pg_ctl and postgres are; default the newest `/usr/lib/postgresql/<v>/bin`. */
  binDir?: string;
  /** How long to wait for the server to accept connections. Default 30 s. */
  readyTimeoutMs?: number;
  /**
   * One more address to listen on besides 127.0.0.1, with the network whose clients it trusts
   * (a drill's bridge to its network namespaces: `{ address: "10.213.0.1", network: "10.213.0.0/24" }`).
   * `url` stays on 127.0.0.1; clients in that network use the address with the same port.
   */
  listen?: { address: string; network: string };
}

/** The newest Debian PostgreSQL's bin directory, or undefined when none is installed. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

const isRoot = () => process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user. */
function asOwner(binary: string, args: string[]): [string, string[]] {
  if (!isRoot()) return [binary, args];
  return ["setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", binary, ...args]];
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await run("id", ["-u", "postgres"]);
  const { stdout: g } = await run("id", ["-g", "postgres"]);
  return { uid: Number(stdout.trim()), gid: Number(g.trim()) };
}

/** Whether a process runs (a zombie no one reaped yet counts as gone). */
const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const started = new Set<number>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const pid of started) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Starts a disposable PostgreSQL: `initdb` (trust auth for `postgres`, UTF8) in a fresh temp dir
 * owned by the `postgres` user when running as root, then the server on a free 127.0.0.1 port with
 * its unix socket in that dir and fsync, synchronous_commit and full_page_writes on. Resolves once
 * `pg_isready` answers.
 * @throws Error naming the log when the server does not come up within `readyTimeoutMs`.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresHandle> {
  installExitHook();
  const bin = options.binDir ?? postgresBinDir();
  if (bin === undefined) {
    throw new Error(
      "no PostgreSQL found under /usr/lib/postgresql/*/bin (apt-get install postgresql)",
    );
  }
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  const dir = await mkdtemp(join(tmpdir(), "idem-pg-"));
  const dataDir = join(dir, "data");
  const socketDir = join(dir, "sock");
  const log = join(dir, "server.log");
  await mkdir(socketDir);
  if (isRoot()) {
    const { uid, gid } = await postgresIds();
    await chown(dir, uid, gid);
    await chown(socketDir, uid, gid);
  }
  const port = await freePort();
  const [initBin, initArgs] = asOwner(join(bin, "initdb"), [
    "-D",
    dataDir,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-locale",
    "--no-sync",
  ]);
  await run(initBin, initArgs);
  await writeFile(
    join(dir, "postgresql.extra.conf"),
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1${options.listen ? `,${options.listen.address}` : ""}'`,
      `unix_socket_directories = '${socketDir}'`,
      "fsync = on",
      "synchronous_commit = on",
      "full_page_writes = on",
      "max_connections = 200",
      "",
    ].join("\n"),
  );
  await run(
    ...asOwner("sh", ["-c", `cat '${dir}/postgresql.extra.conf' >> '${dataDir}/postgresql.conf'`]),
  );
  if (options.listen) {
    if (!/^[0-9.]+$/.test(options.listen.address) || !/^[0-9.]+\/\d+$/.test(options.listen.network))
      throw new Error(
        `startPostgres: listen needs an IPv4 address and CIDR (got ${options.listen.address}, ${options.listen.network})`,
      );
    const hba = `host all all ${options.listen.network} trust`;
    await run(...asOwner("sh", ["-c", `echo '${hba}' >> '${dataDir}/pg_hba.conf'`]));
  }

  let pid = -1;
  let stopped = false;

  const readPid = async (): Promise<number> => {
    const text = await readFile(join(dataDir, "postmaster.pid"), "utf8");
    return Number(text.split("\n")[0]);
  };

  const ready = async (): Promise<boolean> => {
    try {
      await run(join(bin, "pg_isready"), ["-h", socketDir, "-p", String(port), "-U", "postgres"]);
      return true;
    } catch {
      return false;
    }
  };

  const launch = async (): Promise<void> => {
    const seconds = String(Math.ceil(readyTimeoutMs / 1000));
    const [ctl, ctlArgs] = asOwner(join(bin, "pg_ctl"), [
      "start",
      "-D",
      dataDir,
      "-l",
      log,
      "-w",
      "-t",
      seconds,
    ]);
    try {
      await run(ctl, ctlArgs);
    } catch (e) {
      const text = await readFile(log, "utf8").catch(() => "");
      throw new Error(
        `PostgreSQL did not start on port ${port} (log ${log}):\n${text.slice(-4000)}`,
        { cause: e },
      );
    }
    const deadline = Date.now() + readyTimeoutMs;
    while (Date.now() < deadline) {
      if (existsSync(join(dataDir, "postmaster.pid")) && (await ready())) {
        pid = await readPid();
        started.add(pid);
        watchParent(pid, dir, 2000);
        return;
      }
      await sleep(50);
    }
    const text = await readFile(log, "utf8").catch(() => "");
    throw new Error(`PostgreSQL did not start on port ${port} (log ${log}):\n${text.slice(-4000)}`);
  };

  /** Waits until no process of the cluster holds its data dir (the postmaster and its backends). */
  const waitGone = async (): Promise<void> => {
    const deadline = Date.now() + 30_000;
    while (isRunning(pid) && Date.now() < deadline) await sleep(25);
    started.delete(pid);
  };

  const kill = async (): Promise<void> => {
    if (pid <= 0 || !isRunning(pid)) return;
    process.kill(pid, "SIGKILL");
    await waitGone();
  };

  const shutdown = async (): Promise<void> => {
    if (pid <= 0 || !isRunning(pid)) return;
    process.kill(pid, "SIGINT"); // PostgreSQL's fast shutdown
    await waitGone();
    if (isRunning(pid)) await kill();
  };

  const restart = async (): Promise<void> => {
    await shutdown();
    // After a SIGKILL the orphaned backends exit on their own once they see the postmaster gone;
    // until then the old shared memory is in use and a new postmaster refuses to start.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await launch();
        return;
      } catch (e) {
        if (Date.now() >= deadline) throw e;
        await sleep(200);
      }
    }
  };

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await shutdown();
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await launch();
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const url = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  return {
    url: url("postgres"),
    port,
    dataDir,
    get pid() {
      return pid;
    },
    createDatabase: async (name: string) => {
      if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
        throw new Error(`createDatabase: name must match [a-z_][a-z0-9_]* (got ${name})`);
      }
      await run(join(bin, "createdb"), [
        "-h",
        socketDir,
        "-p",
        String(port),
        "-U",
        "postgres",
        name,
      ]);
      return url(name);
    },
    kill,
    restart,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/**
 * An `error` listener for a test's own pg pool or client: lets through only the disposable
 * server's shutdown (57P01) of an idle connection at teardown; any other error throws.
 */
export function ignoreServerShutdown(e: Error & { code?: string }): void {
  if (e.code !== "57P01") throw e;
}
