// Hints that lead somewhere (issue 36): a config whose journal does not exist yet (a SQLite file
// deleted or never made, a new PostgreSQL database) gets `idem init --journal` from doctor and
// from every reading command, and that command creates it while keeping the config; `idem status`
// never creates it by itself. Only `idem init` creates a journal (issue 42): a journal file removed,
// or a database whose tables were dropped, is refused by every other command with exit 3 naming it
// and docs/runbook.md "A lost journal", and nothing is created.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idem, workspace } from "./ops-helpers.js";

let server: PostgresHandle;
beforeAll(async () => {
  server = await startPostgres();
}, 180_000);
afterAll(async () => {
  await server?.stop();
});

/** The journal's finding of `idem doctor --json`. */
async function journalFinding(config: string, env: Record<string, string> = {}) {
  const r = await idem(["doctor", "--json", "--config", config], { env });
  const report = JSON.parse(r.stdout) as { findings: { key: string; fix: string }[] };
  return report.findings.find((f) => f.key.startsWith("journal"));
}

describe("a config without its journal", () => {
  it("SQLite: doctor and status name idem init --journal, which creates it and keeps the config", async () => {
    const ws = workspace({ journal: { path: "state/journal.db" } }, { journal: false });
    try {
      const before = readFileSync(ws.config, "utf8");
      const journal = join(ws.dir, "state/journal.db");
      expect((await journalFinding(ws.config))?.fix).toContain("idem init --journal");
      const status = await idem(["status", "--config", ws.config]);
      expect(status.code).toBe(3);
      expect(status.stderr).toContain("idem init --journal");
      expect(existsSync(journal)).toBe(false);
      const plain = await idem(["init", "--config", ws.config]);
      expect(plain.code).toBe(1);
      expect(plain.stderr).toContain("idem init --journal");

      const init = await idem(["init", "--journal", "--json", "--config", ws.config]);
      expect(init.code, init.stderr).toBe(0);
      expect(JSON.parse(init.stdout)).toMatchObject({ config: ws.config, created: true });
      expect(existsSync(journal)).toBe(true);
      expect(readFileSync(ws.config, "utf8")).toBe(before);
      expect(await journalFinding(ws.config)).toBeUndefined();
      expect((await idem(["status", "--config", ws.config])).code).toBe(0);
      const again = await idem(["init", "--journal", "--json", "--config", ws.config]);
      expect(JSON.parse(again.stdout)).toMatchObject({ created: false });
    } finally {
      ws.remove();
    }
  });

  it("PostgreSQL: status does not create the tables; idem init --journal does", async () => {
    const url = await server.createDatabase("fresh_db");
    const ws = workspace({ journal: { url } });
    const env = { IDEM_JOURNAL_URL: "" };
    try {
      expect((await journalFinding(ws.config, env))?.fix).toContain("idem init --journal");
      const status = await idem(["status", "--config", ws.config], { env });
      expect(status.code).toBe(3);
      expect(status.stderr).toContain("idem init --journal");
      // Still no tables: doctor finds the database as empty as before.
      expect((await journalFinding(ws.config, env))?.fix).toContain("idem init --journal");

      const init = await idem(["init", "--journal", "--json", "--config", ws.config], { env });
      expect(init.code, init.stderr).toBe(0);
      expect(JSON.parse(init.stdout)).toMatchObject({ created: true });
      expect(await journalFinding(ws.config, env)).toBeUndefined();
      const after = await idem(["status", "--json", "--config", ws.config], { env });
      expect(after.code, after.stderr).toBe(0);
      expect(JSON.parse(after.stdout)).toMatchObject({ outputs: 0, leased: [] });
    } finally {
      ws.remove();
    }
  });
});

/** Every file and folder under `dir`, with its size (a file) or "dir". */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const abs = join(d, e.name);
      out.push(`${relative(dir, abs)} ${e.isDirectory() ? "dir" : statSync(abs).size}`);
      if (e.isDirectory()) walk(abs);
    }
  };
  walk(dir);
  return out.sort();
}

const OUTPUT = { jobId: "after-loss", agent: "writer", effects: [] };

/** The commands that must refuse a lost journal, each bounded: a start that went on is a failure. */
const COMMANDS: string[][] = [
  ["submit", "out.json"],
  ["executor", "--no-api"],
  ["interpreter", "--once"],
  ["interpreter"],
  ["enqueue", "job.json"],
  ["dlq", "ls"],
  ["audit"],
  ["ls"],
  ["status"],
  ["show", "after-loss"],
  ["replay", "--all", "--dry-run"],
  ["backup", "copy.db"],
];

async function refusedByEach(config: string, dir: string, where: RegExp, env = {}) {
  writeFileSync(join(dir, "out.json"), JSON.stringify(OUTPUT));
  writeFileSync(join(dir, "job.json"), JSON.stringify({ jobId: "j", agent: "writer", input: {} }));
  const before = tree(dir);
  for (const args of COMMANDS) {
    const r = await idem([...args, "--config", config], { cwd: dir, env, timeoutMs: 60_000 });
    const what = `idem ${args.join(" ")}: ${r.stderr}`;
    expect(r.code, what).toBe(3);
    expect(r.stderr, what).toMatch(where);
    expect(r.stderr, what).toContain('docs/runbook.md, "A lost journal"');
    expect(tree(dir), what).toEqual(before);
  }
}

describe("a journal that was there and is gone", () => {
  it("SQLite: its file removed, every command but init exits 3 naming it, and nothing is created", async () => {
    const ws = workspace({ agents: { writer: { command: ["true"] } } });
    try {
      const journal = join(ws.dir, ".idem/journal.db");
      rmSync(journal);
      await refusedByEach(ws.config, ws.dir, new RegExp(`no journal at ${journal}`));
      expect(existsSync(journal)).toBe(false);
    } finally {
      ws.remove();
    }
  }, 600_000);

  it("PostgreSQL: its tables dropped, submit, the executor and the interpreter exit 3, and no table is created", async () => {
    const url = await server.createDatabase("dropped_db");
    const ws = workspace({ journal: { url }, agents: { writer: { command: ["true"] } } });
    const env = { IDEM_JOURNAL_URL: "" };
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const init = await idem(["init", "--journal", "--config", ws.config], { env });
      expect(init.code, init.stderr).toBe(0);
      const { rows } = await client.query<{ name: string }>(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'",
      );
      expect(rows.length).toBeGreaterThan(5);
      await client.query(`DROP TABLE ${rows.map((r) => `"${r.name}"`).join(", ")} CASCADE`);
      await refusedByEach(ws.config, ws.dir, /no journal tables in postgres:/, env);
      const after = await client.query("SELECT 1 FROM pg_tables WHERE schemaname = 'public'");
      expect(after.rows).toEqual([]);
    } finally {
      await client.end();
      ws.remove();
    }
  }, 600_000);
});
