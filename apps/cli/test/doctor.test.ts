// `idem doctor` through the real built CLI: exit codes, the findings table and --json. The checks
// themselves are tested in packages/core/test/doctor-checks.test.ts.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { idem, initRepo, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.remove());

/** A config with one healthy target of each local kind, made real on disk. */
function healthy(): Record<string, unknown> {
  initRepo(join(ws.dir, "repos/site"));
  mkdirSync(join(ws.dir, "outbox"));
  writeFileSync(join(ws.dir, "agent.mjs"), "");
  return {
    repos: { site: { path: "repos/site" } },
    roots: { outbox: { path: "outbox" } },
    agents: { writer: { command: ["node", "./agent.mjs"] } },
  };
}

describe("idem doctor", () => {
  it("exits 3 with a findings table, and prints the findings as JSON", async () => {
    ws.writeConfig({ ...healthy(), journal: { retentionDays: 0.01 } });
    const table = await idem(["doctor", "--config", ws.config]);
    expect(table.code).toBe(3);
    expect(table.stdout).toContain("journal.retentionDays");
    expect(table.stdout).toContain("what to do");
    const json = await idem(["doctor", "--json", "--config", ws.config]);
    expect(json.code).toBe(3);
    const parsed = JSON.parse(json.stdout) as { ok: boolean; findings: { key: string }[] };
    expect(parsed.ok).toBe(false);
    expect(parsed.findings.map((f) => f.key)).toContain("journal.retentionDays");
  });

  it("exits 0 on a healthy workspace and reports a broken journal as a violation", async () => {
    ws.writeConfig(healthy());
    await (await openSqliteJournal(join(ws.dir, ".idem/journal.db"))).close();
    const ok = await idem(["doctor", "--config", ws.config]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    writeFileSync(join(ws.dir, ".idem/journal.db"), "not a database at all, just text");
    const bad = await idem(["doctor", "--json", "--config", ws.config]);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stdout).findings.map((f: { key: string }) => f.key)).toContain("journal");
  });

  it("reports queued jobs that no configured agent can take, naming the agent and the count (exit 3)", async () => {
    ws.writeConfig(healthy());
    const journal = await openSqliteJournal(join(ws.dir, ".idem/journal.db"));
    try {
      for (const jobId of ["q-1", "q-2"]) {
        await journal.jobs.enqueue({ jobId, agent: "ghost", input: {} });
      }
      await journal.jobs.enqueue({ jobId: "q-3", agent: "writer", input: {} });
    } finally {
      await journal.close();
    }
    const r = await idem(["doctor", "--json", "--config", ws.config]);
    expect(r.code, r.stdout + r.stderr).toBe(3);
    const findings = JSON.parse(r.stdout).findings as { key: string; finding: string }[];
    const ghost = findings.filter((f) => f.key === "agents.ghost");
    expect(ghost).toHaveLength(1);
    expect(ghost[0]?.finding).toMatch(/^2 queued job\(s\) for agent "ghost"/);
    expect(findings.some((f) => f.key === "agents.writer")).toBe(false);
  });
});
