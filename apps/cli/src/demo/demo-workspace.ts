import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CliError, EXIT } from "../context.js";
import { DEMO_AGENTS } from "./demo-agents.js";

export interface DemoWorkspace {
  dir: string;
  config: string;
  repo: string;
  outbox: string;
  log: string;
  agents: string[];
}

/**
 * Creates the demo's workspace: `idem.config.json` on the embedded queue (no servers) with short
 * leases so crashes recover in seconds, a git repo with an initial commit, an outbox root, and
 * the three agents. `dir` must be missing or empty; without it a fresh temp dir is used.
 */
export function createDemoWorkspace(dir?: string): DemoWorkspace {
  let root: string;
  if (dir === undefined) {
    root = mkdtempSync(join(tmpdir(), "idem-demo-"));
  } else {
    root = resolve(dir);
    if (existsSync(root) && readdirSync(root).length > 0) {
      throw new CliError(`${root} is not empty; pick another --dir or remove it`, EXIT.FAILED);
    }
    mkdirSync(root, { recursive: true });
  }
  const repo = join(root, "repos/site");
  const outbox = join(root, "outbox");
  mkdirSync(repo, { recursive: true });
  mkdirSync(outbox, { recursive: true });
  mkdirSync(join(root, "agents"), { recursive: true });
  const gitEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: "idem demo",
    GIT_AUTHOR_EMAIL: "demo@idem.invalid",
    GIT_COMMITTER_NAME: "idem demo",
    GIT_COMMITTER_EMAIL: "demo@idem.invalid",
  };
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, ...args], { env: gitEnv, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), "# site\n\nWritten by idem's demo agents.\n");
  git("add", "README.md");
  git("-c", "maintenance.auto=false", "commit", "-q", "-m", "initial commit");

  const agents: Record<string, { command: string[]; timeoutMs: number }> = {};
  for (const [name, source] of Object.entries(DEMO_AGENTS)) {
    writeFileSync(join(root, "agents", `${name}.mjs`), source);
    agents[name] = { command: [process.execPath, `./agents/${name}.mjs`], timeoutMs: 20_000 };
  }
  const config = {
    journal: { path: ".idem/journal.db" },
    repos: { site: { path: "repos/site", branch: "main" } },
    roots: { outbox: { path: "outbox" } },
    agents,
    // Short leases and waits, so that a killed process's work is taken over within seconds.
    queue: { ackWaitMs: 1500, maxDeliver: 10, backoffMs: [200, 400], maxAckPending: 1 },
    interpreter: { leaseMs: 1500, maxAttempts: 10, backoffMs: [100, 200, 400], pollMs: 50 },
    api: { port: 0 },
  };
  const file = join(root, "idem.config.json");
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  return {
    dir: root,
    config: file,
    repo,
    outbox,
    log: join(root, "demo.log"),
    agents: Object.keys(DEMO_AGENTS),
  };
}
