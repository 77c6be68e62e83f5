// `idem mcp` (the built CLI) driven by clients the project does not write, the way real clients
// use it across processes: the official MCP Inspector's CLI, one call per process, over stdio and
// over Streamable HTTP with a SIGKILL of the server between two calls; and the SDK's client run
// again from the start after a crash (a new attempt) beside one that resumes. A job's draft lives
// in `.idem/drafts`, so nothing staged is lost with a process, and nothing of a run that was
// started over is recorded twice; a one-shot finish with nothing staged spends nothing.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "@idem/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import {
  cleanEnv,
  git,
  IDEM_BIN,
  idem,
  idemJson,
  initRepo,
  inspectorCall,
  startIdem,
  writeConfig,
} from "./helpers.js";

beforeAll(() => {
  if (!existsSync(IDEM_BIN.replace("bin/idem.js", "dist/main.js")))
    throw new Error("build the CLI first (npm run build)");
});

/** A workspace with the `site` repository (branch main) and a journal made by `idem init`. */
async function workspace(dir: string): Promise<void> {
  initRepo(join(dir, "site"));
  writeConfig(dir, { repos: { site: { path: "site", branch: "main" } } });
  const init = await idem(dir, ["init", "--journal"]);
  expect(init.code, init.stderr).toBe(0);
}

const commitArgs = (jobId: string) => ({
  repo: "site",
  message: `add ${jobId}`,
  files: JSON.stringify([{ path: `${jobId}.md`, content: `# ${jobId}\n` }]),
});

/** The commits on `site`'s main that carry `jobId`'s effect keys, after the interpreter ran. */
async function commitsOf(dir: string, jobId: string): Promise<string[]> {
  const interpreted = await idem(dir, ["interpreter", "--once"]);
  expect(interpreted.code, interpreted.stderr).toBe(0);
  return git(join(dir, "site"), "log", "--format=%s%x09%(trailers:key=Idem-Effect,valueonly)")
    .split("\n")
    .filter((l) => l.includes(`${jobId}/`));
}

describe("the MCP Inspector's CLI, one call per process", () => {
  it("over stdio: one process stages a git commit, the next finishes, and one commit is applied; a one-shot finish with nothing staged spends nothing", async () => {
    await using dir = await tempDir("idem-mcp-inspector-stdio-");
    await workspace(dir.path);
    const server = (job: string) => [
      process.execPath,
      IDEM_BIN,
      "mcp",
      "--job",
      job,
      "--agent",
      "writer",
    ];

    // A one-shot finish on a job with nothing staged: refused, nothing recorded.
    const empty = await inspectorCall(dir.path, server("page-0"), "finish", { summary: "oops" });
    expect(empty.isError).toBe(true);
    expect(empty.structuredContent).toMatchObject({ status: "empty", code: "INVALID_STATE" });

    const staged = await inspectorCall(
      dir.path,
      server("page-1"),
      "effect_git_commit",
      commitArgs("page-1"),
    );
    expect(staged.isError, JSON.stringify(staged)).toBeFalsy();
    expect(staged.structuredContent).toMatchObject({ key: "page-1/0", staged: 1 });
    const finished = await inspectorCall(dir.path, server("page-1"), "finish", {
      summary: "a page",
    });
    expect(finished.structuredContent).toMatchObject({ status: "recorded", keys: ["page-1/0"] });
    // A retry of the finish whose answer was lost: a duplicate, and still one output.
    const again = await inspectorCall(dir.path, server("page-1"), "finish", { summary: "a page" });
    expect(again.structuredContent).toMatchObject({ status: "duplicate" });
    expect(await commitsOf(dir.path, "page-1")).toEqual(["add page-1\tpage-1/0"]);
    const status = await idemJson<{ outputs: number; rejections: number }>(dir.path, ["status"]);
    expect(status).toMatchObject({ outputs: 1, rejections: 0 });
  });

  it("over HTTP: a SIGKILL of the server between the staging process and the finishing one changes nothing", async () => {
    await using dir = await tempDir("idem-mcp-inspector-http-");
    await workspace(dir.path);
    const listen = async () => {
      const s = startIdem(dir.path, ["mcp", "--http", "--port", "0"]);
      return { s, url: (await s.waitFor(/idem mcp: (http:\/\/\S+\/mcp)/))[1] as string };
    };
    const first = await listen();
    const target = (url: string) => [`${url}?job=page-2&agent=writer`, "--transport", "http"];
    const staged = await inspectorCall(
      dir.path,
      target(first.url),
      "effect_git_commit",
      commitArgs("page-2"),
    );
    expect(staged.structuredContent).toMatchObject({ key: "page-2/0" });
    first.s.child.kill("SIGKILL");
    await first.s[Symbol.asyncDispose]();

    await using second = startIdem(dir.path, ["mcp", "--http", "--port", "0"]);
    const url = (await second.waitFor(/idem mcp: (http:\/\/\S+\/mcp)/))[1] as string;
    const finished = await inspectorCall(dir.path, target(url), "finish", { summary: "a page" });
    expect(finished.structuredContent).toMatchObject({ status: "recorded", keys: ["page-2/0"] });
    expect(await commitsOf(dir.path, "page-2")).toEqual(["add page-2\tpage-2/0"]);
  });
});

describe("the SDK's client run again after a crash", () => {
  it("a run started over (a new --attempt) records its own effects once; the crashed run's attempt is refused", async () => {
    await using dir = await tempDir("idem-mcp-attempts-");
    await workspace(dir.path);
    const env = Object.fromEntries(
      Object.entries(cleanEnv()).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
    const open = async (attempt: string) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [IDEM_BIN, "mcp", "--job", "page-3", "--agent", "writer", "--attempt", attempt],
        cwd: dir.path,
        env,
        stderr: "pipe",
      });
      const client = new Client({ name: "agent", version: "1.0.0" });
      await client.connect(transport);
      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args })) as CallToolResult;
      return { client, transport, call };
    };
    const write = (path: string) => ({ root: "outbox", path, content: `${path}\n` });

    // The first run stages two effects and its server is SIGKILLed.
    const run1 = await open("run-1");
    await run1.call("effect_file_write", write("a.md"));
    await run1.call("effect_file_write", write("b.md"));
    process.kill(run1.transport.pid as number, "SIGKILL");
    await run1.client.close();

    // The agent runs again from the start, as a new attempt: the same two effects, once each.
    const run2 = await open("run-2");
    try {
      expect(run2.client.getInstructions()).toContain("attempt 2");
      await run2.call("effect_file_write", write("a.md"));
      const b = await run2.call("effect_file_write", write("b.md"));
      expect(b.structuredContent).toMatchObject({ key: "page-3/1", staged: 2, attempt: 2 });
      // The crashed run's attempt cannot come back: refused before a session starts.
      const stale = await idem(dir.path, [
        "mcp",
        "--job",
        "page-3",
        "--agent",
        "writer",
        "--attempt",
        "run-1",
      ]);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toContain("superseded");
      const done = await run2.call("finish", { summary: "two files" });
      expect(done.structuredContent).toMatchObject({
        status: "recorded",
        keys: ["page-3/0", "page-3/1"],
      });
    } finally {
      await run2.client.close();
    }
    const shown = await idemJson<{ output: { output: { effects: unknown[] } } }>(dir.path, [
      "show",
      "page-3",
    ]);
    expect(shown.output.output.effects).toHaveLength(2);
  });
});
