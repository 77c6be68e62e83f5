import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { effectTargetsOf } from "@idem/effects";
import { PostgresJournalStore } from "@idem/journal";
import { type EffectSpec, parseConfig } from "@idem/schema";
import { type PostgresHandle, startPostgres } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitIn, idem, initRepo, workspace } from "./ops-helpers.js";

// A replay by root on a PostgreSQL journal (journal.url): the filter and the lineage are in the run
// record there too, so an interpreter process killed mid-run and another one taking it over
// touch only the effects in the filter.

let pg: PostgresHandle;
beforeAll(async () => {
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

describe("idem replay --root on PostgreSQL", () => {
  it("keeps the filter across an interpreter crash and shows the lineage", async () => {
    const url = await pg.createDatabase("replay_filter");
    const ws = workspace();
    const dir = mkdtempSync(join(tmpdir(), "idem-replay-pg-"));
    try {
      const raw = {
        repos: { site: { path: join(dir, "site") } },
        roots: { outbox: { path: join(dir, "outbox") } },
        journal: { url },
        interpreter: { pollMs: 20, backoffMs: [20], leaseMs: 5_000 },
      };
      ws.writeConfig(raw);
      initRepo(join(dir, "site"));
      mkdirSync(join(dir, "outbox"));
      const parsed = parseConfig(raw, { dir: ws.dir, file: ws.config });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
      const effects: EffectSpec[] = [
        {
          kind: "git.commit",
          repo: "site",
          message: "a",
          files: [{ path: "a.txt", content: "a\n" }],
        },
        { kind: "file.write", root: "outbox", path: "o.txt", content: "o\n" },
        { kind: "file.write", root: "outbox", path: "p.txt", content: "p\n" },
      ];
      const output = { jobId: "job-1", agent: "writer", effects };
      const journal = await PostgresJournalStore.open(url);
      try {
        await journal.outputs.record(output, {
          source: "cli",
          targets: effectTargetsOf(output, parsed.config),
        });
      } finally {
        await journal.close();
      }
      const cfg = ["--config", ws.config];
      const env = { IDEM_JOURNAL_URL: "" };
      const first = await idem(["interpreter", "--once", ...cfg], { env });
      expect(first.code, first.stderr).toBe(0);
      // The incident: the commit and both files are lost.
      gitIn(join(dir, "site"), "reset", "-q", "--hard", "HEAD~1");
      rmSync(join(dir, "outbox/o.txt"));
      rmSync(join(dir, "outbox/p.txt"));

      const made = await idem(
        ["replay", "--all", "--root", "outbox", "--reason", "outbox wiped", "--yes", ...cfg],
        { env: { ...env, IDEM_ACTOR: "oncall" } },
      );
      expect(made.code, made.stderr).toBe(0);
      const killed = await idem(["interpreter", "--once", ...cfg], {
        env: { ...env, IDEM_FAULT: "interpreter.after-intent" },
      });
      expect(killed.code).not.toBe(0);
      const next = await idem(["interpreter", "--once", ...cfg], { env, timeoutMs: 180_000 });
      expect(next.code, next.stderr).toBe(0);

      expect(readFileSync(join(dir, "outbox/o.txt"), "utf8")).toBe("o\n");
      expect(readFileSync(join(dir, "outbox/p.txt"), "utf8")).toBe("p\n");
      // The commit, outside the filter, is still lost: nothing probed or applied it.
      expect(gitIn(join(dir, "site"), "log", "--format=%B", "main")).not.toContain(
        "Idem-Effect: job-1/0",
      );
      expect(existsSync(join(dir, "site/a.txt"))).toBe(false);

      const shown = await idem(["show", "job-1", "--json", ...cfg], { env });
      expect(shown.code, shown.stderr).toBe(0);
      const view = JSON.parse(shown.stdout) as {
        runs: { generation: number; state: string; only: unknown }[];
        effects: { key: string; generation: number }[];
        lineage: Record<string, unknown>[];
      };
      expect(view.runs.map((r) => [r.generation, r.state, r.only])).toEqual([
        [1, "done", null],
        [2, "done", { roots: ["outbox"] }],
      ]);
      expect(view.effects.filter((e) => e.generation === 2).map((e) => e.key)).toEqual([
        "job-1/1",
        "job-1/2",
      ]);
      expect(view.lineage).toMatchObject([
        {
          generation: 2,
          replaysGeneration: 1,
          actor: "oncall",
          reason: "outbox wiped",
          selection: { all: true },
          only: { roots: ["outbox"] },
        },
      ]);
    } finally {
      ws.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
