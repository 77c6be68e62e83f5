// The peers bench's harness (test/bench/peers/run.mjs, `npm run bench:peers`, issue 35) run small:
// 3 jobs per system, one round, one kill per system, short idem leases. It needs the peers that the
// bench installs into test/bench/peers/node_modules; where they are not installed it is skipped
// with the reason (it never downloads: CI need not install them).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain .mjs of the bench, no types
import { peersInstalled } from "../bench/peers/lib/install.mjs";
// @ts-expect-error: plain .mjs of the bench, no types
import { BEGIN, END, keepPeersSection, peersSection } from "../bench/peers/lib/section.mjs";
import { buildForTest, REPO_ROOT } from "../chaos/interpreter-fixture.js";
import { skipUnless } from "../support/skip.js";

const run = promisify(execFile);
const installed = peersInstalled() as { reason: string | null };
const N = 3;

interface Audit {
  commits: number;
  duplicates: string[];
  missing: string[];
  foreign: string[];
  fsck: string;
}
interface Results {
  rates: Record<string, (number | null)[]>;
  details: Record<
    string,
    { error: string | null; audit: Audit; state: { settled: number }; cpuPerJobMs: number | null }[]
  >;
  crash: Record<string, { error: string | null; kills: number; audit: Audit; state: object }>;
}

describe("the peers section of BENCHMARKS.md", () => {
  it("is kept by npm run bench's rewrite of the page and replaced by the next peers run", () => {
    const section = `${BEGIN}\n## Peers\n| a | b |\n${END}`;
    const old = `# Benchmarks\n\nold figures\n\n${section}\n`;
    const kept = keepPeersSection(old, "# Benchmarks\n\nnew figures\n");
    expect(kept).toContain("new figures");
    expect(kept).not.toContain("old figures");
    expect(peersSection(kept)).toBe(section);
    expect(keepPeersSection(null, "# Benchmarks\n")).toBe("# Benchmarks\n");
  });
});

const PEERS = skipUnless(
  installed.reason === null,
  `the peers are not installed (npm run bench:peers installs them): ${installed.reason}`,
);
describe(`the peers harness, ${N} jobs a system`, PEERS, () => {
  const dir = mkdtempSync(join(tmpdir(), "peers-harness-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("measures every system, leaves idem's commits whole under a kill, and writes only its own section", async () => {
    buildForTest("apps/cli", "packages/testing");
    const page = join(dir, "BENCHMARKS.md");
    writeFileSync(page, "# Benchmarks\n\nthe rest of the page\n");
    const json = join(dir, "results.json");
    const env = { ...process.env };
    for (const k of ["IDEM_FAULT", "IDEM_JOURNAL_URL", "NATS_URL", "IDEM_CONFIG"]) delete env[k];
    const args = ["--jobs", String(N), "--rounds", "1", "--kills", "1", "--seed", "35"];
    args.push("--idem-lease-ms", "3000", "--stall-s", "20", "--idem-stall-s", "30");
    args.push("--no-install", "--out", page, "--json", json);
    await run(process.execPath, [join(REPO_ROOT, "test/bench/peers/run.mjs"), ...args], {
      env,
      maxBuffer: 1 << 24,
    });
    const r = JSON.parse(readFileSync(json, "utf8")) as Results;
    const systems = Object.keys(r.rates);
    expect(systems).toEqual([
      "idem-sqlite",
      "idem-postgres",
      "idem-sqlite-command",
      "dbos-git",
      "dbos-git-tuned",
      "dbos-iso",
      "dbos-iso-tuned",
      "restate-git",
      "restate-git-tuned",
      "restate-iso",
      "restate-iso-tuned",
      "plain",
    ]);
    for (const name of systems) {
      const [first] = r.details[name] ?? [];
      expect(first?.error, name).toBeNull();
      expect(r.rates[name]?.[0], name).toBeGreaterThan(0);
      // Without kills every system makes one commit per job, each holding its own file.
      expect(first?.audit, name).toMatchObject({ duplicates: [], missing: [], foreign: [] });
      expect(first?.audit.fsck, name).toBe("ok");
      // Every system's CPU per job is read (from /proc; 3 jobs may take less than a clock tick).
      expect(typeof first?.cpuPerJobMs, name).toBe("number");
    }
    // The crash run: idem, and each peer at its tuned setting.
    expect(Object.keys(r.crash)).toEqual([
      "idem-sqlite",
      "idem-postgres",
      ...systems.filter((s) => s.endsWith("-tuned")),
    ]);
    for (const name of ["idem-sqlite", "idem-postgres"]) {
      const c = r.crash[name];
      expect(c?.error, name).toBeNull();
      expect(c?.kills, name).toBe(1);
      expect(c?.audit, name).toMatchObject({ duplicates: [], missing: [], foreign: [] });
    }
    const text = readFileSync(page, "utf8");
    expect(text.startsWith("# Benchmarks\n\nthe rest of the page\n")).toBe(true);
    expect(peersSection(text)).toContain("| idem, SQLite journal |");
    expect(peersSection(text)).toContain("| idem, SQLite journal, command agent |");
    expect(peersSection(text)).toContain("| DBOS, git command, minPollingIntervalMs 50 |");
    expect(peersSection(text)).toContain("| peer at its best");
    // Twelve systems, each started afresh twice (a PostgreSQL, a Restate server): 2-3 minutes on a
    // quiet machine, more than vitest's 5 when CI shares it.
  }, 900_000);
});
