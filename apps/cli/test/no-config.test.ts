import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { idem } from "./ops-helpers.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** An empty directory holding only the input files a command is given. */
function emptyDir(): string {
  dir = mkdtempSync(join(tmpdir(), "idem-no-config-"));
  writeFileSync(
    join(dir, "out.json"),
    JSON.stringify({ jobId: "n-1", agent: "writer", effects: [] }),
  );
  writeFileSync(
    join(dir, "job.json"),
    JSON.stringify({ jobId: "n-1", agent: "writer", input: {} }),
  );
  return dir;
}

/** Every command that needs a journal, as a user would first type it. */
const JOURNAL_COMMANDS = [
  ["status"],
  ["status", "--json"],
  ["ls"],
  ["show", "n-1"],
  ["submit", "out.json"],
  ["submit", "-"],
  ["enqueue", "job.json"],
  ["dlq", "ls"],
  ["dlq", "retry", "n-1"],
  ["dlq", "resolve", "n-1", "--applied", "--reason", "checked"],
  ["audit"],
  ["doctor"],
  ["replay", "--all", "--dry-run"],
  ["backup", "copy.db"],
  ["prune", "--dry-run"],
  ["interpreter", "--once"],
  ["executor"],
  ["up"],
];

describe("a command that needs a journal, with no config anywhere", () => {
  it("says where it looked and to run idem init, exits 2, and creates nothing", async () => {
    const cwd = emptyDir();
    for (const args of JOURNAL_COMMANDS) {
      const r = await idem(args, { cwd, input: "{}" });
      const what = `idem ${args.join(" ")}: ${r.stderr}`;
      expect(r.code, what).toBe(2);
      expect(r.stderr, what).toContain(join(cwd, "idem.config.json"));
      expect(r.stderr, what).toMatch(/IDEM_CONFIG/);
      expect(r.stderr, what).toMatch(/idem init/);
      expect(r.stdout, what).toBe("");
      expect(readdirSync(cwd).sort(), what).toEqual(["job.json", "out.json"]);
    }
    // 18 CLI processes one after another: minutes on a busy machine, a bound above the default.
  }, 600_000);

  it("works once idem init has made the config and the journal, and IDEM_CONFIG finds one from elsewhere", async () => {
    const cwd = emptyDir();
    const init = await idem(["init"], { cwd });
    expect(init.code, init.stderr).toBe(0);
    expect(readdirSync(cwd).sort()).toEqual([".idem", "idem.config.json", "job.json", "out.json"]);
    const status = await idem(["status", "--json"], { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).outputs).toBe(0);
    const elsewhere = mkdtempSync(join(tmpdir(), "idem-no-config-elsewhere-"));
    try {
      const r = await idem(["status", "--json"], {
        cwd: elsewhere,
        env: { IDEM_CONFIG: join(cwd, "idem.config.json") },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("leaves commands that need no journal alone: --help and a command's help", async () => {
    const cwd = emptyDir();
    for (const args of [["--help"], ["status", "--help"], ["submit", "--help"]]) {
      const r = await idem(args, { cwd });
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/Usage: idem/);
    }
    expect(readdirSync(cwd).sort()).toEqual(["job.json", "out.json"]);
  });
});
