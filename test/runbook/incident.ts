import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { effectTargetsOf } from "@idem/effects";
import { type JournalStore, openJournalStore } from "@idem/journal";
import { type AgentOutput, journalLocationOf } from "@idem/schema";
import { cleanEnv, IDEM_BIN } from "../../apps/cli/test/ops-helpers.js";
import { createWorkspace, sleep, type Workspace } from "../chaos/interpreter-fixture.js";

/** A long-running idem process an incident starts, freezes or kills (never by name: by its PID). */
export interface IdemProcess {
  child: ChildProcess;
  pid: number;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with its exit code (or the signal's name) once it has exited. */
  exited: Promise<number | string>;
  /**
   * SIGKILLs it and every process it started (its group; SIGCONT first, so a stopped one dies too);
   * waits for it.
   */
  kill(): Promise<void>;
}

/** Sends `signal` to the process group `pgid`; a group that is gone already is no error. */
function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
  }
}

/** Starts `idem <args>` in `cwd`, as the person on call would, with the environment `env` adds. */
export function startIdem(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): IdemProcess {
  const child = spawn(process.execPath, [IDEM_BIN, ...args], {
    cwd: options.cwd,
    env: cleanEnv({ IDEM_LOG_LEVEL: "info", ...options.env }),
    stdio: ["ignore", "pipe", "pipe"],
    // A group of its own: `kill` ends what it started too (`idem up`'s executor and interpreter).
    detached: true,
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | string>((r) =>
    child.on("exit", (code, signal) => r(code ?? signal ?? "?")),
  );
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    child,
    pid: child.pid as number,
    output: () => out,
    exited,
    async kill() {
      signalGroup(child.pid as number, "SIGCONT");
      signalGroup(child.pid as number, "SIGKILL");
      if (!done) await exited;
    },
  };
}

/** A workspace of the interpreter suites (repos site and docs, root outbox) in a temp folder. */
export interface Incident {
  ws: Workspace;
  dir: string;
  /** The workspace's journal, opened in this process (for checks); opened again after `closeJournal`. */
  journal(): Promise<JournalStore>;
  /** Closes this process's handle (before the journal file is moved or replaced). */
  closeJournal(): Promise<void>;
  /** Records outputs as `idem submit` would. */
  record(outputs: AgentOutput[]): Promise<void>;
  processes: IdemProcess[];
  start(args: string[], env?: Record<string, string>): IdemProcess;
  close(): Promise<void>;
}

export async function incident(
  interpreter: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<Incident> {
  const dir = mkdtempSync(join(tmpdir(), "idem-runbook-"));
  // The HTTP API on a port of its own (0: the OS picks), never the default one another runs on.
  const ws = await createWorkspace(dir, interpreter, { api: { port: 0 }, ...extra });
  let opened: JournalStore | undefined;
  const processes: IdemProcess[] = [];
  const journal = async () => {
    opened ??= await openJournalStore(journalLocationOf(ws.config));
    return opened;
  };
  return {
    ws,
    dir,
    journal,
    async closeJournal() {
      await opened?.close();
      opened = undefined;
    },
    processes,
    async record(outputs) {
      const j = await journal();
      for (const o of outputs) {
        const r = await j.outputs.record(o, {
          source: "cli",
          targets: effectTargetsOf(o, ws.config),
        });
        if (r.status !== "recorded" && r.status !== "duplicate")
          throw new Error(`${o.jobId}: ${r.status}`);
      }
    },
    start(args, env) {
      const p = startIdem(args, { cwd: dir, ...(env && { env }) });
      processes.push(p);
      return p;
    },
    async close() {
      for (const p of processes) await p.kill();
      await opened?.close();
      await sleep(10);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An output of `n` git.commit effects on repo `site`, each its own file. */
export function commits(jobId: string, n = 1, repo = "site"): AgentOutput {
  return {
    jobId,
    agent: "writer",
    effects: Array.from({ length: n }, (_, i) => ({
      kind: "git.commit" as const,
      repo,
      message: `${jobId} file ${i}`,
      files: [{ path: `${jobId}-${i}.txt`, content: `${jobId} ${i}\n` }],
    })),
  };
}

/** A command agent: one commit per job, and its job ID appended to runs.log each time it runs. */
export const COMMIT_AGENT = `import { appendFileSync, readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
appendFileSync("runs.log", job.jobId + "\\n");
process.stdout.write(JSON.stringify({ effects: [{ kind: "git.commit", repo: "site",
  message: "job " + job.jobId, files: [{ path: job.jobId + ".txt", content: job.jobId + "\\n" }] }] }));
`;

/** Writes jobs for agent `writer` as JSON Lines into `dir/name`; answers `name`. */
export function jobsFile(dir: string, name: string, ids: string[]): string {
  writeFileSync(
    join(dir, name),
    ids.map((id) => JSON.stringify({ jobId: id, agent: "writer", input: { id } })).join("\n"),
  );
  return name;
}
