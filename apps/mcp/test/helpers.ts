import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SqliteJournalStore } from "@idem/journal";

const HERE = dirname(fileURLToPath(import.meta.url));

/** The built CLI: the suites that spawn it need `npm run build` first. */
export const IDEM_BIN = resolve(HERE, "../../cli/bin/idem.js");
/** The kind of the config's own the tests add (`test.note`). */
export const NOTE_KIND = join(HERE, "fixtures/test-note-kind.mjs");
/** A generous bound for what a busy machine does in a second: never an assertion. */
export const PATIENCE_MS = 120_000;

/** The environment of a child idem: no inherited config, NATS URL, fault or journal URL. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...extra };
  for (const k of ["IDEM_CONFIG", "NATS_URL", "IDEM_FAULT", "IDEM_JOURNAL_URL"])
    if (!(k in extra)) delete env[k];
  return env;
}

/**
 * Writes a workspace's idem.config.json in `dir`: an `outbox` root (the folder made), the
 * `test.note` kind (its notes under `notes/`), and what `extra` sets on top (each section replaced);
 * and its SQLite journal, as `idem init` makes it.
 */
export function writeConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const config = {
    journal: { path: ".idem/journal.db" },
    roots: { outbox: { path: "outbox" } },
    kinds: { "test.note": { module: NOTE_KIND, options: { dir: join(dir, "notes") } } },
    ...extra,
  };
  mkdirSync(join(dir, "outbox"), { recursive: true });
  const file = join(dir, "idem.config.json");
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  // Its journal made, as idem init makes it: no other command creates one.
  const journal = config.journal as { path?: string };
  if (journal.path !== undefined) void SqliteJournalStore.open(resolve(dir, journal.path)).close();
  return file;
}

/** Runs the real CLI in `cwd` and answers its exit code and output. */
export function idem(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [IDEM_BIN, ...args], {
      cwd,
      env: cleanEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), PATIENCE_MS);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, stdout, stderr });
    });
  });
}

/** The JSON a CLI command prints with --json, or a failure naming its stderr. */
export async function idemJson<T>(cwd: string, args: string[]): Promise<T> {
  const r = await idem(cwd, [...args, "--json"]);
  if (r.stdout.trim() === "")
    throw new Error(`idem ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** A long-running idem child (`idem mcp --http`, `idem executor`) and what it printed. */
export interface IdemChild extends AsyncDisposable {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in its output (rejects after PATIENCE_MS or on exit). */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
}

/** Starts `idem <args>` in `cwd`; disposal sends SIGTERM and waits for the exit. */
export function startIdem(cwd: string, args: string[]): IdemChild {
  const child = spawn(process.execPath, [IDEM_BIN, ...args], {
    cwd,
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const listeners = new Set<() => void>();
  const take = (d: Buffer) => {
    out += d.toString("utf8");
    for (const l of listeners) l();
  };
  child.stdout?.on("data", take);
  child.stderr?.on("data", take);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    child,
    output: () => out,
    waitFor(pattern) {
      return new Promise((res, rej) => {
        const done = (f: () => void) => {
          clearTimeout(timer);
          listeners.delete(look);
          child.off("exit", onExit);
          f();
        };
        const look = () => {
          const m = pattern.exec(out);
          if (m) done(() => res(m));
        };
        const onExit = () => done(() => rej(new Error(`idem ${args.join(" ")} exited:\n${out}`)));
        const timer = setTimeout(
          () =>
            done(() =>
              rej(new Error(`no ${pattern} in the output of idem ${args.join(" ")}:\n${out}`)),
            ),
          PATIENCE_MS,
        );
        listeners.add(look);
        child.once("exit", onExit);
        look();
      });
    },
    async [Symbol.asyncDispose]() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Polls `check` until it answers a value (not undefined), up to PATIENCE_MS. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs git in `dir` as the tests' committer; answers its stdout. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "test",
      GIT_AUTHOR_EMAIL: "test@localhost",
      GIT_COMMITTER_NAME: "test",
      GIT_COMMITTER_EMAIL: "test@localhost",
    },
  });
}

/** `git init -b main` in `dir` with one initial commit. */
export function initRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "README.md"), "# test\n");
  git(dir, "add", "README.md");
  git(dir, "commit", "-q", "-m", "initial");
}

/** The official MCP Inspector's command line (the release that runs on Node 20). */
export const INSPECTOR = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/inspector/cli/build/cli.js",
);

/**
 * One call of the Inspector's CLI mode in its own process (`--cli <target> --method tools/call`),
 * as a client that makes one call per process does; answers the tool's result it prints.
 */
export async function inspectorCall(
  cwd: string,
  target: string[],
  tool: string,
  args: Record<string, string> = {},
): Promise<{ isError?: boolean; structuredContent?: Record<string, unknown> }> {
  const pairs = Object.entries(args).map(([k, v]) => `${k}=${v}`);
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        INSPECTOR,
        "--cli",
        ...target,
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        ...(pairs.length > 0 ? ["--tool-arg", ...pairs] : []),
      ],
      { cwd, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", fail);
    child.on("close", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
  if (r.code !== 0) throw new Error(`the Inspector exited ${r.code}: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout);
}
