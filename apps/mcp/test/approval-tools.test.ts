// The operators' approval tools of `idem mcp` (docs/approvals.md), driven by the MCP SDK's client
// over stdio against the built CLI: `approvals` with mcp.operatorTools read, `approve` and `reject`
// with write, never in a session bound to a job; a decision is bound to the output's digest.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { idem, writeConfig } from "./helpers.js";
import { setOperatorTools, withSession } from "./operator-session.js";

/** An agent's session records one file write under the gated root. */
async function recordWrite(dir: string, jobId: string): Promise<void> {
  await withSession(dir, ["--job", jobId, "--agent", "writer"], async (call, client) => {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    for (const operator of ["approvals", "approve", "reject"])
      expect(tools).not.toContain(operator);
    await call("effect_file_write", { root: "outbox", path: `${jobId}.txt`, content: "x\n" });
    expect((await call("finish", { summary: jobId })).structuredContent).toMatchObject({
      status: "recorded",
    });
  });
}

describe("idem mcp's approval tools", () => {
  it("list what awaits, approve bound to the digest, reject with the reason; the actor recorded", async () => {
    await using dir = await tempDir("idem-mcp-approvals-");
    writeConfig(dir.path, { approvals: { rules: [{ name: "outbox", kind: "file.write" }] } });
    setOperatorTools(dir.path, "write");
    await recordWrite(dir.path, "ap-1");
    await recordWrite(dir.path, "ap-2");
    expect((await idem(dir.path, ["interpreter", "--once"])).code).toBe(0);
    expect(existsSync(join(dir.path, "outbox", "ap-1.txt"))).toBe(false);

    setOperatorTools(dir.path, "read");
    await withSession(dir.path, [], async (call, client) => {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain("approvals");
      expect(tools).not.toContain("approve");
      const listed = (await call("approvals")).structuredContent as {
        awaiting: { jobId: string; request: { digest: string; effects: number[] } }[];
      };
      expect(listed.awaiting.map((a) => a.jobId)).toEqual(["ap-1", "ap-2"]);
    });

    setOperatorTools(dir.path, "write");
    await withSession(dir.path, [], async (call) => {
      const other = await call("approve", { jobId: "ap-1", reason: "r", digest: "0".repeat(64) });
      expect(other.isError).toBe(true);
      const ok = await call("approve", { jobId: "ap-1", reason: "checked the file" });
      expect(ok.structuredContent).toMatchObject({
        decision: "approved",
        actor: "oncall (mcp) via ops-test",
        effects: [0],
      });
      const no = await call("reject", { jobId: "ap-2", reason: "not this one" });
      expect(no.structuredContent).toMatchObject({ decision: "rejected" });
      expect((await call("reject", { jobId: "ap-2", reason: "again" })).isError).toBe(true);
    });
    expect((await idem(dir.path, ["interpreter", "--once"])).code).toBe(0);
    expect(readFileSync(join(dir.path, "outbox", "ap-1.txt"), "utf8")).toBe("x\n");
    expect(existsSync(join(dir.path, "outbox", "ap-2.txt"))).toBe(false);
    const shown = JSON.parse((await idem(dir.path, ["show", "ap-2", "--json"])).stdout);
    expect(shown.approvals.at(-1)).toMatchObject({
      step: "rejected",
      actor: "oncall (mcp) via ops-test",
      reason: "not this one",
    });
  });
});
