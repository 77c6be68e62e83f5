// The interpreter's crash suites against git targets on a server: a workspace whose repos are
// bare repositories reached by URL (git daemon on loopback or file://), each workspace with its own
// mirrors, and the interpreter child that passes its fault hook into the targets.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "@idem/schema";
import { CHILD_SCRIPT, type ChildResult, type Workspace } from "./interpreter-fixture.js";

/** Where each remote alias lives: its URL and the bare repository behind it (for checks). */
export interface RemoteRepos {
  site: { url: string; path: string };
  docs: { url: string; path: string };
}

/**
 * A workspace in `dir` whose repos `site` and `docs` are remotes (mirrors in `dir/.idem/mirrors`),
 * with an outbox root. `repoPath` and `docsPath` are the bare repositories, so the checks of
 * interpreter-fixture (trailer counts, verify) read the remote branches.
 */
export function createRemoteWorkspace(
  dir: string,
  remotes: RemoteRepos,
  options: {
    interpreter?: Record<string, unknown>;
    journalPath?: string;
    siteBranches?: string[];
  } = {},
): Workspace {
  const outboxPath = join(dir, "outbox");
  mkdirSync(outboxPath, { recursive: true });
  const raw = {
    journal: { path: options.journalPath ?? ".idem/journal.db" },
    repos: {
      site: { url: remotes.site.url, branch: "main", branches: options.siteBranches ?? [] },
      docs: { url: remotes.docs.url, branch: "main" },
    },
    roots: { outbox: { path: "outbox" } },
    interpreter: { leaseMs: 2000, backoffMs: [50, 100], pollMs: 20, ...options.interpreter },
  };
  const configFile = join(dir, "idem.config.json");
  writeFileSync(configFile, JSON.stringify(raw, null, 2));
  const parsed = parseConfig(raw, { dir, file: configFile });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return {
    dir,
    repoPath: remotes.site.path,
    docsPath: remotes.docs.path,
    outboxPath,
    configFile,
    config: parsed.config,
    raw,
  };
}

/** Runs the remote interpreter child (`--once` unless `--long`) on a workspace. */
export function startRemoteChild(
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
