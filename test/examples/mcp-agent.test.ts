// examples/mcp-agent against the real thing: the built `idem` CLI (executor, interpreter, replay)
// in child processes, the embedded queue, a real git repository and folder as targets, and the
// example agent with the MCP SDK's client and its scripted model, started by the executor.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const IDEM_BIN = join(REPO_ROOT, "apps/cli/bin/idem.js");
const EXAMPLE = join(REPO_ROOT, "examples/mcp-agent");
/** A generous bound for what a busy machine does in a second or two: never an assertion. */
const PATIENCE_MS = 120_000;

const run = promisify(execFile);

function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ["IDEM_CONFIG", "NATS_URL", "IDEM_FAULT", "IDEM_JOURNAL_URL"])
    delete env[name];
  return env;
}

async function idem(cwd: string, ...args: string[]) {
  try {
    const r = await run(process.execPath, [IDEM_BIN, ...args], { cwd, env: childEnv() });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/**
 * The example's config and its journal in `dir`, its agent run from examples/ (where the SDK resolves), with the
 * `outbox` folder and the `site` repository (main, one commit) it names.
 */
function createWorkspace(dir: string): void {
  const config = JSON.parse(readFileSync(join(EXAMPLE, "idem.config.json"), "utf8"));
  config.agents.writer.command = [process.execPath, join(EXAMPLE, "agent.mjs")];
  config.queue = { backoffMs: [200], pollMs: 50 };
  writeFileSync(join(dir, "idem.config.json"), JSON.stringify(config, null, 2));
  writeFileSync(join(dir, "job.json"), readFileSync(join(EXAMPLE, "job.json")));
  // As the README says: only `idem init` makes a journal (--journal: for the config already here).
  execFileSync(process.execPath, [IDEM_BIN, "init", "--journal"], { cwd: dir, env: childEnv() });
  mkdirSync(join(dir, "outbox"));
  const site = join(dir, "site");
  mkdirSync(site);
  const git = (...args: string[]) => execFileSync("git", ["-C", site, ...args], { stdio: "pipe" });
  git("init", "-q", "-b", "main");
  writeFileSync(join(site, "README.md"), "# site\n");
  git("add", "README.md");
  git(
    "-c",
    "user.name=test",
    "-c",
    "user.email=test@localhost",
    "-c",
    "maintenance.auto=false",
    "commit",
    "-q",
    "-m",
    "initial commit",
  );
}

/** Commits on the site's main branch that carry the effect key as their Idem-Effect trailer. */
function commitsOf(dir: string, key: string): number {
  const log = execFileSync(
    "git",
    ["-C", join(dir, "site"), "log", "main", "--format=%(trailers:key=Idem-Effect,valueonly)%x00"],
    {
      encoding: "utf8",
    },
  );
  return log.split("\0").filter((t) => t.trim() === key).length;
}

function startExecutor(cwd: string) {
  const child: ChildProcess = spawn(process.execPath, [IDEM_BIN, "executor", "--no-api"], {
    cwd,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (d: Buffer) => {
    log += d.toString("utf8");
  });
  child.stderr?.on("data", (d: Buffer) => {
    log += d.toString("utf8");
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    log: () => log,
    async [Symbol.asyncDispose]() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

interface Shown {
  output: {
    source: string;
    output: { summary?: string; effects: Record<string, unknown>[] };
  } | null;
  effects: { key: string; generation: number; state: string }[];
}

beforeAll(() => {
  if (!existsSync(join(REPO_ROOT, "apps/cli/dist/main.js")))
    throw new Error("build the CLI first (npm run build, or npx tsc -b)");
});

describe("examples/mcp-agent", () => {
  it("is run by idem executor with its job's MCP server; every effect it staged exists once at its target, after a replay too", async () => {
    await using dir = await tempDir("idem-example-mcp-");
    createWorkspace(dir.path);
    {
      await using executor = startExecutor(dir.path);
      const enqueued = await idem(dir.path, "enqueue", "job.json");
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const deadline = Date.now() + PATIENCE_MS;
      let shown: Shown = { output: null, effects: [] };
      while (shown.output === null && Date.now() < deadline) {
        shown = JSON.parse((await idem(dir.path, "show", "page-1", "--json")).stdout) as Shown;
        if (shown.output === null) await new Promise((r) => setTimeout(r, 200));
      }
      expect(shown.output, executor.log()).not.toBeNull();
      expect(shown.output).toMatchObject({
        source: "executor",
        output: {
          summary: 'a note and a page for "Hello from MCP"',
          effects: [
            { kind: "file.write", root: "outbox", path: "notes/page-1.md" },
            { kind: "git.commit", repo: "site", branch: "main" },
          ],
        },
      });
      // The model's refused call staged nothing, and its correction was staged once.
      expect(shown.output?.output.effects).toHaveLength(2);
      expect(executor.log()).toContain("refused (path): correcting");
    }
    const interpreted = await idem(dir.path, "interpreter", "--once");
    expect(interpreted.code, interpreted.stderr).toBe(0);
    const page = "# Hello from MCP\n\nThis page was staged through idem's MCP server.\n";
    expect(readFileSync(join(dir.path, "outbox/notes/page-1.md"), "utf8")).toBe(page);
    expect(existsSync(join(dir.path, "notes")), "the refused path was never written").toBe(false);
    expect(commitsOf(dir.path, "page-1/1")).toBe(1);
    expect(
      execFileSync("git", ["-C", join(dir.path, "site"), "show", "main:pages/page-1.md"], {
        encoding: "utf8",
      }),
    ).toBe(page);

    // A replay decides both effects again: found present at their targets, neither applied twice.
    const replayed = await idem(
      dir.path,
      "replay",
      "--job",
      "page-1",
      "--yes",
      "--now",
      "--reason",
      "example check",
    );
    expect(replayed.code, replayed.stderr + replayed.stdout).toBe(0);
    const after = JSON.parse((await idem(dir.path, "show", "page-1", "--json")).stdout) as Shown;
    expect(after.effects.filter((e) => e.generation === 2).map((e) => [e.key, e.state])).toEqual([
      ["page-1/0", "present"],
      ["page-1/1", "present"],
    ]);
    expect(commitsOf(dir.path, "page-1/1")).toBe(1);
    const status = JSON.parse((await idem(dir.path, "status", "--json")).stdout);
    expect(status).toMatchObject({ outputs: 1, rejections: 0 });
  });
});
