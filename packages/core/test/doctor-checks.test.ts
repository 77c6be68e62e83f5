import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { parseConfig } from "@idem/schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Finding } from "../src/doctor/finding.js";
import { checkQueuedAgents } from "../src/doctor/queued-agents-check.js";
import { runDoctor } from "../src/doctor/run-doctor.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "idem-doctor-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function load(raw: unknown) {
  const r = parseConfig(raw, { dir, file: join(dir, "idem.config.json") });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

function gitIn(repo: string, ...args: string[]): void {
  execFileSync("git", ["-C", repo, "-c", "maintenance.auto=false", ...args], {
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "test",
      GIT_AUTHOR_EMAIL: "test@localhost",
      GIT_COMMITTER_NAME: "test",
      GIT_COMMITTER_EMAIL: "test@localhost",
    },
  });
}

/** `git init -b <branch>` with one initial commit. */
function initRepo(repo: string, branch = "main"): void {
  mkdirSync(repo, { recursive: true });
  gitIn(repo, "init", "-q", "-b", branch);
  writeFileSync(join(repo, "README.md"), "# test\n");
  gitIn(repo, "add", "README.md");
  gitIn(repo, "commit", "-q", "-m", "initial");
}

/** A config with one healthy target of each local kind, made real on disk. */
function healthy(): Record<string, unknown> {
  initRepo(join(dir, "repos/site"));
  mkdirSync(join(dir, "outbox"));
  writeFileSync(join(dir, "agent.mjs"), "");
  return {
    repos: { site: { path: "repos/site" } },
    roots: { outbox: { path: "outbox" } },
    agents: { writer: { command: ["node", "./agent.mjs"] } },
  };
}

describe("runDoctor", () => {
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
      before: () => mkdirSync(join(dir, "plain")),
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
      before: () => writeFileSync(join(dir, "afile"), "x"),
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

  it("names unreachable servers without the credentials of their URLs", async () => {
    const report = await runDoctor(
      load({
        ...healthy(),
        journal: { url: "postgres://idem:Pg5ecret@127.0.0.1:1/idem" },
        nats: { url: "nats://idem:Nat5ecret@127.0.0.1:1" },
        publish: {
          ev: { subjectPrefix: "ev", stream: "EV", url: "nats://T0kenSecret@127.0.0.1:2" },
        },
      }),
      { timeoutMs: 2000 },
    );
    const text = JSON.stringify(report.findings);
    expect(report.findings.map((f) => f.key)).toEqual(
      expect.arrayContaining(["journal", "nats.url", "publish.ev.url"]),
    );
    expect(text).not.toMatch(/Pg5ecret|Nat5ecret|T0kenSecret/);
    expect(text).toContain("nats://***@127.0.0.1:1");
  });

  it("checks an http target only syntactically unless --network is given", async () => {
    const config = load({
      ...healthy(),
      http: { targets: { hooks: { baseUrl: "http://127.0.0.1:1", idempotencyKeys: true } } },
    });
    expect((await runDoctor(config)).ok).toBe(true);
    const online = await runDoctor(config, { network: true, timeoutMs: 2000 });
    expect(online.findings.map((f) => f.key)).toContain("http.targets.hooks.baseUrl");
  });
});

describe("checkQueuedAgents", () => {
  it("names each agent no configured agent matches with its queued jobs: a violation on the embedded queue, a warning with NATS", async () => {
    const journal = await openSqliteJournal(join(dir, "journal.db"));
    try {
      await journal.jobs.enqueue({ jobId: "g-1", agent: "ghost", input: {} });
      await journal.jobs.enqueue({ jobId: "g-2", agent: "ghost", input: {} });
      await journal.jobs.enqueue({ jobId: "o-1", agent: "other", input: {} });
      await journal.jobs.enqueue({ jobId: "w-1", agent: "writer", input: {} });
      const agents = { writer: { command: ["true"] } };
      const found = async (config: ReturnType<typeof load>) => {
        const findings: Finding[] = [];
        await checkQueuedAgents(journal, config, (severity, key, finding, fix) =>
          findings.push({ severity, key, finding, fix }),
        );
        return findings;
      };
      const embedded = await found(load({ agents }));
      expect(embedded.map((f) => [f.severity, f.key])).toEqual([
        ["violation", "agents.ghost"],
        ["violation", "agents.other"],
      ]);
      expect(embedded[0]?.finding).toMatch(/^2 queued job\(s\) for agent "ghost"/);
      const nats = await found(load({ agents, nats: { url: "nats://127.0.0.1:4222" } }));
      expect(nats.map((f) => f.severity)).toEqual(["warning", "warning"]);
    } finally {
      await journal.close();
    }
  });
});
