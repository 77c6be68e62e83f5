// An MCP agent (agents.<name>.mcp) run by the real `idem executor`, SIGKILLed after it staged its
// effects and before it exited: nothing of that run is recorded, the job is delivered again, and
// the second run's output is recorded and interpreted once.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { eventually, idem, idemJson, startIdem, writeConfig } from "./helpers.js";

const AGENT = join(import.meta.dirname, "fixtures/mcp-agent.mjs");

interface Shown {
  output: {
    source: string;
    output: { summary?: string; effects: { kind: string; path: string }[] };
  } | null;
  effects: { key: string; state: string }[];
  events: { type: string; data: { error?: string } | null }[];
}

describe("an MCP agent run by idem executor", () => {
  it("SIGKILLed after staging and before exiting: nothing recorded, delivered again, the second run recorded and interpreted once", async () => {
    await using dir = await tempDir("idem-mcp-kill-");
    const markers = join(dir.path, "markers");
    mkdirSync(markers);
    writeConfig(dir.path, {
      agents: { writer: { command: [process.execPath, AGENT], mcp: true, timeoutMs: 120_000 } },
      queue: { backoffMs: [200], maxDeliver: 3, pollMs: 50 },
    });
    writeFileSync(
      join(dir.path, "job.json"),
      JSON.stringify({ jobId: "kill-1", agent: "writer", input: { markerDir: markers } }),
    );
    await using executor = startIdem(dir.path, ["executor", "--no-api"]);
    await executor.waitFor(/executor started/);
    const enqueued = await idem(dir.path, ["enqueue", "job.json"]);
    expect(enqueued.code, enqueued.stderr).toBe(0);

    const staged = join(markers, "staged");
    const pid = await eventually("the first run to stage its effects", async () =>
      existsSync(staged) ? Number(readFileSync(staged, "utf8")) : undefined,
    );
    // Staged, not recorded: the journal has no output for the job while the agent runs.
    const before = await idem(dir.path, ["show", "kill-1", "--json"]);
    expect(JSON.parse(before.stdout)).toMatchObject({ output: null });
    process.kill(pid, "SIGKILL");

    const shown = await eventually("the second run's output", async () => {
      const s = JSON.parse((await idem(dir.path, ["show", "kill-1", "--json"])).stdout) as Shown;
      return s.output ? s : undefined;
    });
    expect(shown.output?.source).toBe("executor");
    expect(shown.output?.output.summary).toBe("second run");
    expect(shown.output?.output.effects.map((e) => e.path)).toEqual([
      "second-a.txt",
      "second-b.txt",
    ]);
    const failed = shown.events.filter((e) => e.type === "job.failed");
    expect(failed, executor.output()).toHaveLength(1);
    expect(failed[0]?.data?.error).toContain("SIGKILL");
    expect(shown.events.filter((e) => e.type === "output.recorded")).toHaveLength(1);

    const interpreted = await idem(dir.path, ["interpreter", "--once"]);
    expect(interpreted.code, interpreted.stderr).toBe(0);
    expect(readdirSync(join(dir.path, "outbox")).sort()).toEqual(["second-a.txt", "second-b.txt"]);
    expect(readFileSync(join(dir.path, "outbox/second-a.txt"), "utf8")).toBe("second run, a\n");
    const after = await idemJson<Shown>(dir.path, ["show", "kill-1"]);
    expect(after.effects.map((e) => [e.key, e.state])).toEqual([
      ["kill-1/0", "applied"],
      ["kill-1/1", "applied"],
    ]);
    const status = await idemJson<{ outputs: number; rejections: number }>(dir.path, ["status"]);
    expect(status).toMatchObject({ outputs: 1, rejections: 0 });
    // The agent's stdout went to the executor's log, not into its output.
    expect(executor.output()).toContain("finished: ");
  });
});
