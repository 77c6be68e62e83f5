// The end of `vitest run` names what it skipped and why: a real vitest run of a fixture with every
// kind of skip (test/fixtures/skip-summary), reported as `npm test` reports.
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
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
