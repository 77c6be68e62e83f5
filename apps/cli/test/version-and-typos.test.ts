// `idem version` / `idem --version`, and what a mistyped command or option prints: one line with
// the nearest name, exit 2, never the whole help. Runs the built CLI (npx tsc -b apps/cli first).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { IDEM_BIN, idem } from "./ops-helpers.js";

const cwd = mkdtempSync(join(tmpdir(), "idem-version-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const cliVersion = (
  JSON.parse(readFileSync(join(IDEM_BIN, "../../package.json"), "utf8")) as { version: string }
).version;

describe("idem version", () => {
  it("prints the versions of idem, Node, better-sqlite3 and the SQLite it loads, as JSON too", async () => {
    const r = await idem(["version", "--json"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout) as Record<string, string | null>;
    expect(v).toEqual({
      idem: cliVersion,
      node: process.versions.node,
      betterSqlite3: expect.stringMatching(/^\d+\.\d+\.\d+/),
      sqlite: expect.stringMatching(/^3\.\d+\.\d+$/),
    });
  });

  it("is what --version and -V print, one name and version a line", async () => {
    const text = await idem(["version"], { cwd });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `^idem ${cliVersion.replace(/\./g, "\\.")}\\nnode ${process.versions.node}\\nbetter-sqlite3 \\S+\\nsqlite 3\\.\\S+\\n$`,
      ),
    );
    for (const flag of ["--version", "-V"]) {
      const r = await idem([flag], { cwd });
      expect(r.code, `${flag}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toBe(text.stdout);
      expect(r.stderr).toBe("");
    }
  });
});

describe("a mistyped command or option", () => {
  it.each([
    [
      ["stauts"],
      /^idem: unknown command 'stauts' \(did you mean status\?\); idem --help lists them\n$/,
    ],
    [
      ["status", "--jsn"],
      /^idem: unknown option '--jsn' \(did you mean --json\?\); idem status --help/,
    ],
    [
      ["dlq", "lss"],
      /^idem: unknown command 'lss' \(did you mean ls\?\); idem dlq --help lists them\n$/,
    ],
    [["xyzzy"], /^idem: unknown command 'xyzzy'; idem --help lists them\n$/],
    [["submit"], /^idem: missing required argument 'file'; idem submit --help has the usage\n$/],
  ])("%j: one line on stderr naming the nearest name, exit 2", async (args, line) => {
    const r = await idem(args, { cwd });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(line);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});
