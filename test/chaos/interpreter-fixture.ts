// Shared by the interpreter's suites: a workspace with a real git repo, a root and a journal, outputs
// with git.commit, git.patch and file.write effects, and checks of every target against the ledger.
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { effectTargetsOf } from "@idem/effects";
import { type JournalStore, openJournalStore, openSqliteJournal } from "@idem/journal";
import {
  type AgentOutput,
  type Config,
  EFFECT_TRAILER,
  type EffectSpec,
  effectKey,
  journalLocationOf,
  parseConfig,
} from "@idem/schema";

const run = promisify(execFile);
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * `tsc -b` of `projects`, so a suite run alone has the dist its child processes run (`npm test`
 * has built it already: then this checks and writes nothing). Tried a second time when the first
 * fails: the first call after a turbo build was seen to fail once and pass when run again. The
 * compiler's output is in the error when the second fails too.
 */
export function buildForTest(...projects: string[]): void {
  const build = () =>
    execFileSync("npx", ["tsc", "-b", ...projects], { cwd: REPO_ROOT, encoding: "utf8" });
  try {
    build();
  } catch {
    try {
      build();
    } catch (e) {
      const out = e as { stdout?: string; stderr?: string };
      throw new Error(
        `tsc -b ${projects.join(" ")} failed:\n${out.stdout ?? ""}${out.stderr ?? ""}`,
      );
    }
  }
}
export const CHILD_SCRIPT = join(REPO_ROOT, "test/chaos/interpreter-child.mjs");
export const IDEM_BIN = join(REPO_ROOT, "apps/cli/bin/idem.js");

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run("git", args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

export interface Workspace {
  dir: string;
  repoPath: string;
  /** A second repo (alias `docs`), so that runs on different targets proceed in parallel. */
  docsPath: string;
  outboxPath: string;
  configFile: string;
  config: Config;
  raw: Record<string, unknown>;
}

/** A workspace in `dir`: repos/site (main, one initial commit), outbox/, idem.config.json, its journal. */
export async function createWorkspace(
  dir: string,
  interpreter: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<Workspace> {
  const repoPath = join(dir, "repos/site");
  const docsPath = join(dir, "repos/docs");
  const outboxPath = join(dir, "outbox");
  mkdirSync(outboxPath, { recursive: true });
  for (const path of [repoPath, docsPath]) {
    mkdirSync(path, { recursive: true });
    await git(path, "init", "-q", "-b", "main");
    await git(path, "config", "user.email", "t@localhost");
    await git(path, "config", "user.name", "t");
    writeFileSync(join(path, "README.md"), "readme\n");
    await git(path, "add", "README.md");
    await git(path, "commit", "-q", "-m", "initial");
  }
  const raw = {
    journal: { path: ".idem/journal.db" },
    repos: {
      site: { path: "repos/site", branch: "main" },
      docs: { path: "repos/docs", branch: "main" },
    },
    roots: { outbox: { path: "outbox" } },
    interpreter: { leaseMs: 2000, backoffMs: [50, 100], pollMs: 20, ...interpreter },
    ...extra,
  };
  const configFile = join(dir, "idem.config.json");
  writeFileSync(configFile, JSON.stringify(raw, null, 2));
  const parsed = parseConfig(raw, { dir, file: configFile });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  // Its journal made, as idem init makes it: no command but init creates one.
  await (await openJournalStore(journalLocationOf(parsed.config), { create: true })).close();
  return { dir, repoPath, docsPath, outboxPath, configFile, config: parsed.config, raw };
}

export function openWorkspaceJournal(ws: Workspace): Promise<JournalStore> {
  return openSqliteJournal(ws.config.journal.path, { synchronous: "NORMAL" });
}

/** A unified diff creating `path` with `lines`, as `git diff` writes it. */
export function newFilePatch(path: string, lines: string[]): string {
  return [
    `diff --git a/${path} b/${path}`,
    "new file mode 100644",
    "--- /dev/null",
    `+++ b/${path}`,
    `@@ -0,0 +1${lines.length === 1 ? "" : `,${lines.length}`} @@`,
    ...lines.map((l) => `+${l}`),
    "",
  ].join("\n");
}

/** A unified diff appending `added` to `path` holding `old` lines: applies only on exactly that end. */
export function appendPatch(path: string, old: string[], added: string): string {
  if (old.length === 0) return newFilePatch(path, [added]);
  const ctx = old.slice(-3);
  const start = old.length - ctx.length + 1;
  return [
    `diff --git a/${path} b/${path}`,
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${start},${ctx.length} +${start},${ctx.length + 1} @@`,
    ...ctx.map((l) => ` ${l}`),
    `+${added}`,
    "",
  ].join("\n");
}

/** An output with one effect of each kind: a commit, an independent patch and a file write. */
export function mixedOutput(jobId: string): AgentOutput {
  return {
    jobId,
    agent: "writer",
    effects: [
      {
        kind: "git.commit",
        repo: "site",
        message: `commit of ${jobId}`,
        files: [{ path: `c/${jobId}.txt`, content: `commit ${jobId}\n` }],
      },
      {
        kind: "git.patch",
        repo: "site",
        message: `patch of ${jobId}`,
        patch: newFilePatch(`p/${jobId}.txt`, [`patch ${jobId}`]),
      },
      { kind: "file.write", root: "outbox", path: `f/${jobId}.txt`, content: `file ${jobId}\n` },
    ],
  };
}

/** `n` outputs, each one patch appending line i to chain.txt: each applies only after the one before. */
export function chainOutputs(prefix: string, n: number, repo = "site"): AgentOutput[] {
  const lines: string[] = [];
  const out: AgentOutput[] = [];
  for (let i = 0; i < n; i++) {
    const line = `${prefix} line ${i}`;
    out.push({
      jobId: `${prefix}-${String(i).padStart(3, "0")}`,
      agent: "writer",
      effects: [
        {
          kind: "git.patch",
          repo,
          message: `chain ${i}`,
          patch: appendPatch("chain.txt", lines, line),
        },
      ],
    });
    lines.push(line);
  }
  return out;
}

export async function recordAll(
  journal: JournalStore,
  config: Config,
  outputs: AgentOutput[],
): Promise<void> {
  for (const o of outputs) {
    const r = await journal.outputs.record(o, {
      source: "test",
      targets: effectTargetsOf(o, config),
    });
    if (r.status !== "recorded") throw new Error(`${o.jobId}: ${r.status}`);
  }
}

/** How many commits reachable from `branch` carry each `Idem-Effect:` key. */
export async function trailerCounts(
  repoPath: string,
  branch = "main",
): Promise<Map<string, number>> {
  const log = await git(repoPath, "log", "--format=%B%x00", branch);
  const counts = new Map<string, number>();
  const re = new RegExp(`^${EFFECT_TRAILER}: (.+)$`, "gm");
  for (const m of log.matchAll(re)) {
    const key = (m[1] as string).trim();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export interface Verdict {
  duplicates: string[];
  missing: string[];
  notDone: string[];
  ledgerDisagrees: string[];
}

/** What {@link verify} answers when every effect happened exactly once and every run is done. */
export const CLEAN = { duplicates: [], missing: [], notDone: [], ledgerDisagrees: [] };

/**
 * Checks every effect of `outputs` at its target and in the ledger: git keys carried by exactly one
 * commit, files holding their bytes, every latest run done, every effect of it applied or present.
 */
export async function verify(
  ws: Workspace,
  journal: JournalStore,
  outputs: AgentOutput[],
): Promise<Verdict> {
  const counts = await trailerCounts(ws.repoPath);
  for (const [k, n] of await trailerCounts(ws.docsPath)) counts.set(k, (counts.get(k) ?? 0) + n);
  const v: Verdict = { duplicates: [], missing: [], notDone: [], ledgerDisagrees: [] };
  for (const [key, n] of counts) if (n > 1) v.duplicates.push(`${key} x${n}`);
  for (const o of outputs) {
    const run = await journal.runs.latest(o.jobId);
    // A run not done says why (its class and last error), so that a failed drill explains itself.
    if (run?.state !== "done")
      v.notDone.push(
        `${o.jobId}: ${run?.state}${run?.lastError ? ` (${run.class}: ${run.lastError})` : ""}`,
      );
    const latest = run?.generation ?? 1;
    const ledger = await journal.ledger.forJob(o.jobId, latest);
    o.effects.forEach((spec: EffectSpec, i) => {
      const key = effectKey(o.jobId, i);
      const row = ledger.find((r) => r.key === key);
      if (!row || (row.state !== "applied" && row.state !== "present"))
        v.ledgerDisagrees.push(`${key}: ${row?.state ?? "no row"}`);
      if (spec.kind === "git.commit" || spec.kind === "git.patch") {
        if ((counts.get(key) ?? 0) === 0) v.missing.push(key);
      } else if (spec.kind === "file.write") {
        let content: string | undefined;
        try {
          content = readFileSync(join(ws.outboxPath, String(spec.path)), "utf8");
        } catch {
          content = undefined;
        }
        if (content !== spec.content) v.missing.push(key);
      }
    });
  }
  return v;
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the interpreter child (`--once`) on a workspace; resolves when it exits. */
export function startChild(
  ws: Workspace,
  options: { env?: Record<string, string>; args?: string[] } = {},
): { child: ReturnType<typeof spawn>; done: Promise<ChildResult> } {
  const child = spawn(process.execPath, [CHILD_SCRIPT, ws.configFile, ...(options.args ?? [])], {
    env: { ...process.env, IDEM_LOG_LEVEL: "warn", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<ChildResult>((res) => {
    child.on("exit", (code, signal) => res({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `done` until it answers true, then resolves; after `timeoutMs` (default 120 s) throws,
 * naming `what`. With `ignoreErrors`, a `done` that throws (a journal whose server is down) counts
 * as not yet; otherwise its error ends the wait.
 */
export async function waitFor(
  what: string,
  done: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; intervalMs?: number; ignoreErrors?: boolean } = {},
): Promise<void> {
  const until = Date.now() + (options.timeoutMs ?? 120_000);
  while (Date.now() < until) {
    const ok = options.ignoreErrors
      ? await Promise.resolve()
          .then(done)
          .catch(() => false)
      : await done();
    if (ok) return;
    await sleep(options.intervalMs ?? 50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** True when /proc says process `pid` is stopped (SIGSTOP). */
export function isStopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).startsWith("T");
}

/**
 * Everything a stale holder could change in a PostgreSQL journal (runs, ledger, events), in a
 * stable order: two snapshots equal means it changed nothing.
 */
export async function journalSnapshot(db: {
  query(sql: string): Promise<{ rows: unknown[] }>;
}): Promise<unknown> {
  const q = async (sql: string) => (await db.query(sql)).rows;
  return {
    runs: await q(
      "SELECT job_id, generation, state, lease_owner, lease_token, attempts, last_error FROM runs ORDER BY id",
    ),
    ledger: await q(
      "SELECT key, generation, state, detail, attempts FROM effects ORDER BY key, generation",
    ),
    events: await q("SELECT id, job_id, type, actor FROM events ORDER BY id"),
  };
}
