// What the install tests share: running a command as a user outside the clone would (no npm_*,
// IDEM_* or NODE_PATH of this process, the install's bin first on PATH), packing the CLI and
// installing the tarball globally into an empty prefix as README's option 3 says, long-running
// processes with their output kept, and a workspace with a command agent made by the installed
// `idem init`.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const MINUTE = 60_000;

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (never rejects): exit code and output. */
export function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        done({ code, stdout, stderr: `${stderr}${error && code === 1 ? error.message : ""}` });
      },
    );
  });
}

/** The environment of a user outside the clone: no npm_* of a running npm script, no NODE_PATH. */
export function userEnv(prefix?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) || k === "NODE_PATH" || k.startsWith("IDEM_") || k === "NATS_URL")
      continue;
    if (k.startsWith("VITEST") || k.startsWith("OTEL_") || k === "NODE_OPTIONS") continue;
    env[k] = v;
  }
  // Without the clone's node_modules/.bin, which `npm test` puts on PATH.
  const path = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((d) => !/node_modules[\\/]\.bin[\\/]?$/.test(d));
  env.PATH = [...(prefix ? [join(prefix, "bin")] : []), ...path].join(delimiter);
  env.NO_COLOR = "1";
  return env;
}

/** `npm pack` of workspace packages into `dest` (their prepack scripts run): the tarballs' paths. */
export async function pack(workspaces: string[], dest: string): Promise<string[]> {
  mkdirSync(dest, { recursive: true });
  const args = ["pack", ...workspaces.flatMap((w) => ["-w", w]), "--pack-destination", dest];
  const packed = await run("npm", args, { cwd: REPO, env: userEnv(), timeoutMs: 3 * MINUTE });
  expect(packed.code, packed.stderr).toBe(0);
  return readdirSync(dest)
    .filter((f) => f.endsWith(".tgz"))
    .map((f) => join(dest, f));
}

/** The CLI installed as README's option 3 says: its bin, the prefix and a user's environment. */
export interface InstalledCli {
  prefix: string;
  bin: string;
  env: NodeJS.ProcessEnv;
  /** Seconds the pack and the global install took. */
  seconds: { pack: number; install: number };
}

/**
 * better-sqlite3's prebuilt binary for this Node, as its install script (prebuild-install) would
 * download it from the project's GitHub releases: the binary `npm ci` built here, packed under the
 * release asset's name in a folder prebuild-install looks in first (`<pkg>_local_prebuilds`).
 * Answers the environment that points there. This machine cannot reach GitHub, so without it the
 * install falls back to compiling the binary (2-3 minutes of both cores), as it does for a user
 * offline.
 */
async function localPrebuild(root: string): Promise<NodeJS.ProcessEnv> {
  const pkg = join(REPO, "node_modules/better-sqlite3");
  const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as {
    version: string;
  };
  const dir = join(root, "prebuilds");
  mkdirSync(dir);
  // glibc (Debian): the asset's libc part is empty.
  const asset = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const tar = await run("tar", ["-czf", join(dir, asset), "build/Release/better_sqlite3.node"], {
    cwd: pkg,
    env: process.env,
    timeoutMs: MINUTE,
  });
  expect(tar.code, tar.stderr).toBe(0);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/**
 * Packs @idem/cli and runs `npm install -g` of the tarball into an empty prefix under `root`.
 * `prebuilt`: better-sqlite3 installs its prebuilt binary (as for a user online) rather than
 * compiling it (as for a user offline, this machine's case).
 */
export async function installCli(
  root: string,
  opts: { prebuilt?: boolean } = {},
): Promise<InstalledCli> {
  const prefix = join(root, "prefix");
  mkdirSync(prefix);
  const env = userEnv(prefix);
  const prebuilt = opts.prebuilt ? await localPrebuild(root) : {};
  const t0 = Date.now();
  const tarballs = await pack(["@idem/cli"], join(root, "pack"));
  expect(tarballs).toHaveLength(1);
  const t1 = Date.now();
  // What the README says: npm install -g of the tarball (better-sqlite3 installs or builds its
  // native part).
  const installed = await run(
    "npm",
    ["install", "-g", "--prefix", prefix, "--allow-scripts=better-sqlite3"].concat([
      "--no-audit",
      "--no-fund",
      tarballs[0] as string,
    ]),
    // JOBS: node-gyp compiles better-sqlite3's two sources (SQLite's amalgamation and the
    // binding) side by side, on both cores, rather than one after the other.
    { cwd: root, env: { ...env, ...prebuilt, JOBS: "max" }, timeoutMs: 8 * MINUTE },
  );
  expect(installed.code, installed.stderr).toBe(0);
  expect(installed.stderr).not.toMatch(/EBADENGINE/);
  const seconds = { pack: (t1 - t0) / 1000, install: (Date.now() - t1) / 1000 };
  return { prefix, bin: join(prefix, "bin/idem"), env, seconds };
}

/** A process left running: its combined output so far, its end, and a way to stop it. */
export interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (SIGTERM) to this process only and waits for its exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function start(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Running {
  const child = spawn(cmd, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return await exited;
  };
  return { child, output: () => out, exited, stop };
}

/** Polls `done` every 200 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  done: () => boolean | Promise<boolean>,
  timeoutMs = 2 * MINUTE,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A command agent: writes `outbox/<jobId>.txt` holding the job's `input.text`. */
const WRITER = `import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify({
  summary: "wrote " + job.jobId,
  effects: [{ kind: "file.write", root: "outbox", path: job.jobId + ".txt", content: job.input.text + "\\n" }],
}));
`;

/** A directory set up by the installed `idem init`, with the writer agent, an outbox and `extra` config. */
export async function workspace(
  idem: (args: string[], cwd: string) => Promise<Ran>,
  dir: string,
  extra: Record<string, unknown> = {},
): Promise<{ dir: string; config: string }> {
  mkdirSync(join(dir, "outbox"), { recursive: true });
  const init = await idem(["init"], dir);
  expect(init.code, init.stderr).toBe(0);
  const config = join(dir, "idem.config.json");
  writeFileSync(join(dir, "writer.mjs"), WRITER);
  const base = JSON.parse(readFileSync(config, "utf8")) as Record<string, unknown>;
  const merged = {
    ...base,
    agents: { writer: { command: [process.execPath, "writer.mjs"], timeoutMs: 60_000 } },
    roots: { outbox: { path: "outbox" } },
    // 0 picks a free port: never the 7070 of an idem someone runs on this machine.
    api: { ...(base.api as object), port: 0 },
    ...extra,
  };
  writeFileSync(config, JSON.stringify(merged, null, 2));
  if ("journal" in extra) {
    // Another journal than the one init made (a PostgreSQL URL): only init makes one.
    const made = await idem(["init", "--journal"], dir);
    expect(made.code, made.stderr).toBe(0);
  }
  return { dir, config };
}

/** `n` jobs for the writer agent as JSON Lines, job IDs `<prefix>-1`…. */
export const writerJobs = (prefix: string, n: number): string =>
  `${Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      jobId: `${prefix}-${i + 1}`,
      agent: "writer",
      input: { text: `job ${i + 1}` },
    }),
  ).join("\n")}\n`;
