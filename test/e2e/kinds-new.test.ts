// `idem kinds new` in an empty folder: the kind, its test and its config entry it writes pass the
// in-process tester and the drill as written, the kind importing @idem/kit and zod that nothing
// beside it installs (the CLI's module resolution hook provides them).
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { drillKind, type KindDrillReport } from "@idem/kit/drill";
import type { KindTestReport } from "@idem/kit/test";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { buildForTest, IDEM_BIN, REPO_ROOT } from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);

beforeAll(() => buildForTest("apps/cli"));

async function idem(cwd: string, ...args: string[]) {
  const env = { ...process.env };
  for (const k of ["IDEM_CONFIG", "IDEM_FAULT", "IDEM_JOURNAL_URL", "NODE_PATH"]) delete env[k];
  try {
    const { stdout, stderr } = await run(process.execPath, [IDEM_BIN, ...args], {
      cwd,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe("idem kinds new", () => {
  it("writes a kind, its test and its config entry that pass the tester and the drill as written", async () => {
    await using dir = await tempDir("idem-kinds-new-");
    const made = await idem(dir.path, "kinds", "new", "acme.note");
    expect(made.code, made.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(dir.path, "idem.config.json"), "utf8"));
    expect(config.kinds["acme.note"]).toEqual({
      module: "./kinds/acme-note.mjs",
      options: { dir: "./acme-note-notes" },
    });
    expect(readFileSync(join(dir.path, "kinds/acme-note.test.mjs"), "utf8")).toContain(
      'from "@idem/kit/test"',
    );

    const tested = await idem(dir.path, "kinds", "test", "acme.note", "--in-process", "--json");
    expect(tested.code, tested.stderr).toBe(0);
    const report = JSON.parse(tested.stdout) as KindTestReport;
    expect(report.ok).toBe(true);
    expect(report.faultCalls).toEqual(["acme.before-rename"]);

    const drilled = await idem(dir.path, "kinds", "test", "acme.note", "--outputs", "2", "--json");
    expect(drilled.code, drilled.stderr).toBe(0);
    const drill = JSON.parse(drilled.stdout) as KindDrillReport;
    expect(drill.verdict).toBe("exactly-once-in-effect");
    expect(drill.shown).toBe("exactly-once-in-effect");

    const again = await idem(dir.path, "kinds", "new", "acme.note");
    expect(again.code).toBe(2);

    // The test it wrote, under node:test, with the kit and zod installed beside it (here: linked).
    mkdirSync(join(dir.path, "node_modules/@idem"), { recursive: true });
    symlinkSync(join(REPO_ROOT, "packages/kit"), join(dir.path, "node_modules/@idem/kit"));
    symlinkSync(join(REPO_ROOT, "node_modules/zod"), join(dir.path, "node_modules/zod"));
    // TAP, as Node 20 prints it by default off a terminal (Node 24 prints its spec reporter).
    const nodeTest = await run(
      process.execPath,
      ["--test", "--test-reporter=tap", "kinds/acme-note.test.mjs"],
      { cwd: dir.path },
    );
    expect(nodeTest.stdout).toMatch(/# pass 1/);
  });

  it("is drilled by drillKind from an author project whose idem is a node_modules/.bin link", async () => {
    await using dir = await tempDir("idem-kinds-new-bin-");
    expect((await idem(dir.path, "kinds", "new", "acme.note")).code).toBe(0);
    mkdirSync(join(dir.path, "node_modules/.bin"), { recursive: true });
    symlinkSync(IDEM_BIN, join(dir.path, "node_modules/.bin/idem"));
    // The link's `#!/usr/bin/env node` finds the Node running this suite (on CI's second pass a
    // Node 24 that better-sqlite3 was built for), and nothing else of this checkout's PATH.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    };
    for (const k of ["IDEM_CONFIG", "IDEM_FAULT", "IDEM_JOURNAL_URL"]) delete env[k];
    const report = await drillKind(join(dir.path, "kinds/acme-note.mjs"), {
      cwd: join(dir.path, "kinds"),
      env,
      options: { dir: join(dir.path, "notes") },
      outputs: 1,
    });
    expect(report.verdict).toBe("exactly-once-in-effect");
  });

  it("prints a report, and JSON with --json, when the target fails every call (exit 1)", async () => {
    await using dir = await tempDir("idem-kinds-new-unreachable-");
    expect((await idem(dir.path, "kinds", "new", "acme.note")).code).toBe(0);
    // The notes' folder is a file: every read and write fails.
    writeFileSync(join(dir.path, "blocked"), "not a folder");
    const options = JSON.stringify({ dir: join(dir.path, "blocked") });
    const json = await idem(dir.path, "kinds", "test", "acme.note", "--options", options, "--json");
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as KindDrillReport;
    expect(report.findings.map((f) => f.code)).toEqual(["target-error"]);
    expect(report.crashes.starts).toEqual([]);
    const text = await idem(dir.path, "kinds", "test", "acme.note", "--options", options);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/target-error: probe-before-apply .* failed: UNAVAILABLE/);
    expect(text.stdout).toMatch(/verdict: broken/);
  });
});
