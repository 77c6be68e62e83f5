// The operators' tools of `idem mcp` (mcp.operatorTools), driven by the MCP SDK's client over
// stdio against the built CLI: never in a session bound to a job, off by default, `read` the
// dry-run plan, the audit and the dead letters, `write` replay and resolve too, each change with a
// reason and an actor, as on the CLI.
import { tempDir } from "@idem/testing";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { idem, idemJson, writeConfig } from "./helpers.js";
import { setOperatorTools, withSession } from "./operator-session.js";

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

describe("idem mcp's operators' tools", () => {
  it("are offered as mcp.operatorTools allows, and change the journal only with a reason, recorded with the actor", async () => {
    await using dir = await tempDir("idem-mcp-ops-");
    writeConfig(dir.path);
    // A session bound to an agent's job never has an operator's tools, whatever the setting.
    setOperatorTools(dir.path, "write");
    await withSession(dir.path, ["--job", "op-1", "--agent", "writer"], async (call, client) => {
      const tools = await names(client);
      for (const operator of ["replay_plan", "audit", "dead_letters", "replay", "resolve"])
        expect(tools).not.toContain(operator);
      const refused = await client
        .callTool({ name: "replay", arguments: { all: true, reason: "from a job" } })
        .catch((e: { code?: number }) => e);
      expect(refused).toMatchObject({ code: -32602 });
      await call("effect_file_write", { root: "outbox", path: "op-1.txt", content: "op\n" });
      expect((await call("finish", { summary: "op" })).structuredContent).toMatchObject({
        status: "recorded",
      });
    });
    const interpreted = await idem(dir.path, ["interpreter", "--once"]);
    expect(interpreted.code, interpreted.stderr).toBe(0);
    setOperatorTools(dir.path, "off");
    await withSession(dir.path, [], async (_call, client) => {
      expect(await names(client)).not.toContain("replay_plan");
    });

    setOperatorTools(dir.path, "read");
    await withSession(dir.path, [], async (call, client) => {
      const tools = await names(client);
      expect(tools).toEqual(expect.arrayContaining(["replay_plan", "audit", "dead_letters"]));
      expect(tools).not.toContain("replay");
      expect(tools).not.toContain("resolve");
      const none = await call("replay_plan", {});
      expect(none.isError).toBe(true);
      const badSince = await call("replay_plan", { all: true, since: "yesterday" });
      expect(badSince.structuredContent).toMatchObject({ issues: [{ path: "since" }] });
      const plan = await call("replay_plan", { jobIds: ["op-1"] });
      expect(plan.structuredContent).toMatchObject({
        outputs: 1,
        plan: [{ key: "op-1/0", kind: "file.write", action: "skip" }],
      });
      expect((await call("dead_letters")).structuredContent).toMatchObject({ runs: [], jobs: [] });
      expect((await call("audit")).isError).toBeFalsy();
    });

    setOperatorTools(dir.path, "write");
    await withSession(dir.path, [], async (call) => {
      const noReason = await call("replay", { jobIds: ["op-1"] });
      expect(noReason.isError).toBe(true);
      expect(noReason.structuredContent).toMatchObject({ issues: [{ path: "reason" }] });
      const replayed = await call("replay", { jobIds: ["op-1"], reason: "checking the MCP tools" });
      expect(replayed.isError, JSON.stringify(replayed)).toBeFalsy();
      expect(replayed.structuredContent).toMatchObject({
        created: [{ jobId: "op-1", generation: 2 }],
      });
      // Nothing of op-1 is dead: resolve refuses, naming why.
      const resolve = await call("resolve", { jobId: "op-1", decision: "skipped", reason: "none" });
      expect(resolve.isError).toBe(true);
      expect(resolve.structuredContent).toMatchObject({ code: "INVALID_STATE" });
    });
    const shown = await idemJson<{ lineage: { actor: string; reason: string }[] }>(dir.path, [
      "show",
      "op-1",
    ]);
    expect(shown.lineage).toEqual([
      expect.objectContaining({
        actor: "oncall (mcp) via ops-test",
        reason: "checking the MCP tools",
      }),
    ]);
  });
});
