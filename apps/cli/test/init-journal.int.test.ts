// Hints that lead somewhere (issue 36): a config whose journal does not exist yet (a SQLite file
// deleted or never made, a new PostgreSQL database) gets `idem init --journal` from doctor and
// from every reading command, and that command creates it while keeping the config; `idem status`
// never creates it by itself.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idem, workspace } from "./ops-helpers.js";

let pg: PostgresHandle;
beforeAll(async () => {
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

/** The journal's finding of `idem doctor --json`. */
async function journalFinding(config: string, env: Record<string, string> = {}) {
  const r = await idem(["doctor", "--json", "--config", config], { env });
  const report = JSON.parse(r.stdout) as { findings: { key: string; fix: string }[] };
  return report.findings.find((f) => f.key.startsWith("journal"));
}

describe("a config without its journal", () => {
  it("SQLite: doctor and status name idem init --journal, which creates it and keeps the config", async () => {
    const ws = workspace({ journal: { path: "state/journal.db" } });
    try {
      const before = readFileSync(ws.config, "utf8");
      const journal = join(ws.dir, "state/journal.db");
      expect((await journalFinding(ws.config))?.fix).toContain("idem init --journal");
      const status = await idem(["status", "--config", ws.config]);
      expect(status.code).toBe(1);
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
    const url = await pg.createDatabase("fresh_db");
    const ws = workspace({ journal: { url } });
    const env = { IDEM_JOURNAL_URL: "" };
    try {
      expect((await journalFinding(ws.config, env))?.fix).toContain("idem init --journal");
      const status = await idem(["status", "--config", ws.config], { env });
      expect(status.code).toBe(1);
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
