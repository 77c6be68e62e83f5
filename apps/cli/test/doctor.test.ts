import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openJournal } from "@idem/journal";
import { parseConfig } from "@idem/schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runDoctor } from "../src/ops/doctor-checks.js";
import { idem, initRepo, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.remove());

function load(raw: unknown) {
  const r = parseConfig(raw, { dir: ws.dir, file: ws.config });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

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
  it("finds nothing wrong with a healthy workspace", async () => {
    const report = await runDoctor(load(healthy()));
    expect(report.findings.filter((f) => f.severity === "violation")).toEqual([]);
    expect(report.ok).toBe(true);
  });

  const cases: {
    name: string;
    config: (base: Record<string, unknown>) => unknown;
    before?: () => void;
    key: string;
  }[] = [
    {
      name: "retention inside the redelivery horizon",
      config: (b) => ({ ...b, journal: { retentionDays: 0.01 } }),
      key: "journal.retentionDays",
    },
    {
      name: "retention shorter than the horizon plus the stream's max age",
      config: (b) => ({
        ...b,
        journal: { retentionDays: 3 },
        nats: { url: "nats://127.0.0.1:1" },
      }),
      key: "journal.retentionDays",
    },
    {
      name: "a duplicate window shorter than the publish retry",
      config: (b) => ({
        ...b,
        nats: { url: "nats://127.0.0.1:1", duplicateWindowMs: 1000, publishRetryMs: 60_000 },
      }),
      key: "nats.duplicateWindowMs",
    },
    {
      name: "a duplicate window longer than the max age",
      config: (b) => ({
        ...b,
        nats: { url: "nats://127.0.0.1:1", duplicateWindowMs: 7_200_000, maxAgeMs: 3_600_000 },
      }),
      key: "nats.duplicateWindowMs",
    },
    {
      name: "maxDeliver not above the backoff steps on JetStream",
      config: (b) => ({
        ...b,
        queue: { maxDeliver: 2, backoffMs: [1000, 2000] },
        nats: { url: "nats://127.0.0.1:1" },
      }),
      key: "queue.maxDeliver",
    },
    {
      name: "an unreachable NATS server",
      config: (b) => ({ ...b, nats: { url: "nats://127.0.0.1:1" } }),
      key: "nats.url",
    },
    {
      name: "a repo path that does not exist",
      config: (b) => ({ ...b, repos: { site: { path: "nowhere" } } }),
      key: "repos.site.path",
    },
    {
      name: "a repo path that is not a git repository",
      before: () => mkdirSync(join(ws.dir, "plain")),
      config: (b) => ({ ...b, repos: { site: { path: "plain" } } }),
      key: "repos.site.path",
    },
    {
      name: "a configured branch that does not exist",
      config: (b) => ({ ...b, repos: { site: { path: "repos/site", branch: "release" } } }),
      key: "repos.site.branch",
    },
    {
      name: "a root that does not exist",
      config: (b) => ({ ...b, roots: { outbox: { path: "missing" } } }),
      key: "roots.outbox",
    },
    {
      name: "a root that is a file",
      before: () => writeFileSync(join(ws.dir, "afile"), "x"),
      config: (b) => ({ ...b, roots: { outbox: { path: "afile" } } }),
      key: "roots.outbox",
    },
    {
      name: "an agent program that does not exist",
      config: (b) => ({ ...b, agents: { writer: { command: ["./no-such-agent.sh"] } } }),
      key: "agents.writer.command",
    },
    {
      name: "a publish target without any NATS server",
      config: (b) => ({ ...b, publish: { ev: { subjectPrefix: "ev", stream: "EV" } } }),
      key: "publish.ev.url",
    },
  ];

  for (const c of cases) {
    it(`names ${c.name} as a violation`, async () => {
      const base = healthy();
      c.before?.();
      const report = await runDoctor(load(c.config(base)), { timeoutMs: 2000 });
      expect(report.ok).toBe(false);
      const hit = report.findings.find((f) => f.key === c.key && f.severity === "violation");
      expect(hit, JSON.stringify(report.findings)).toBeDefined();
      expect(hit?.fix.length).toBeGreaterThan(0);
    });
  }

  it("checks an http target only syntactically unless --network is given", async () => {
    const config = load({
      ...healthy(),
      http: { targets: { hooks: { baseUrl: "http://127.0.0.1:1", idempotencyKeys: true } } },
    });
    expect((await runDoctor(config)).ok).toBe(true);
    const online = await runDoctor(config, { network: true, timeoutMs: 2000 });
    expect(online.findings.map((f) => f.key)).toContain("http.targets.hooks.baseUrl");
  });

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
    await (await openJournal(join(ws.dir, ".idem/journal.db"))).close();
    const ok = await idem(["doctor", "--config", ws.config]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    writeFileSync(join(ws.dir, ".idem/journal.db"), "not a database at all, just text");
    const bad = await idem(["doctor", "--json", "--config", ws.config]);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stdout).findings.map((f: { key: string }) => f.key)).toContain("journal");
  });
});
