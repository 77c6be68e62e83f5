// The end of `vitest run` names what it skipped and why: a real vitest run of a fixture with every
// kind of skip (test/fixtures/skip-summary), reported as `npm test` reports.
import { execFile } from "node:child_process";
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURE = join(ROOT, "test/fixtures/skip-summary");

function vitest(): Promise<{ code: number; stdout: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--root", FIXTURE],
      { cwd: FIXTURE, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" }, timeout: 120_000 },
      (error, stdout) => done({ code: error ? Number(error.code ?? 1) : 0, stdout }),
    );
  });
}

describe("the skip summary", () => {
  it("ends the run with each reason, the files and counts, and the skips with no reason counted", async () => {
    const run = await vitest();
    expect(run.code, run.stdout).toBe(0);
    const summary = run.stdout.slice(run.stdout.indexOf("Skipped 5 tests, and why:"));
    expect(summary.trimEnd().split("\n")).toEqual([
      "Skipped 5 tests, and why:",
      "  needs a unicorn - skips.fixture.ts (3)",
      "  no network here - skips.fixture.ts (1)",
      "  no reason given (.skip, .only or a -t filter) - 1",
    ]);
    expect(run.stdout).not.toContain("never printed");
  });
});

/** Every test source of the workspace (.ts under a test folder), but this folder and the fixtures. */
function testSources(): string[] {
  const roots = ["packages", "apps"].flatMap((top) =>
    readdirSync(join(ROOT, top)).map((p) => join(ROOT, top, p, "test")),
  );
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory() && !["node_modules", "fixtures", "support"].includes(e.name)) walk(path);
      else if (e.isFile() && e.name.endsWith(".ts")) out.push(path);
    }
  };
  for (const r of [...roots, join(ROOT, "test")]) walk(r);
  return out;
}

describe("the suites' skips", () => {
  it("each give a reason: no skipIf or runIf, whose skips say nothing", () => {
    const silent = testSources().filter((f) =>
      /\b(describe|it|test)\.(skipIf|runIf)\(/.test(readFileSync(f, "utf8")),
    );
    expect(silent.map((f) => relative(ROOT, f))).toEqual([]);
  });
});
