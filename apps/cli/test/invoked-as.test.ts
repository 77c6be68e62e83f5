// The command a hint names to run this same idem again (the demo's last line): `idem` for an
// install on PATH, `npx idem` in the clone, the script's path otherwise. Real files and symlinks
// laid out as npm lays them out.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { invokedAs, shellWord } from "../src/ops/invoked-as.js";

const root = mkdtempSync(join(tmpdir(), "idem-invoked-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A bin script at `file` (the package's bin/idem.js). */
function script(file: string): string {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, "#!/usr/bin/env node\n");
  chmodSync(file, 0o755);
  return file;
}

/** `link` -> `target`, as npm links a bin. */
function link(target: string, linkPath: string): string {
  mkdirSync(join(linkPath, ".."), { recursive: true });
  symlinkSync(target, linkPath);
  return linkPath;
}

// A global install: <prefix>/bin/idem -> <prefix>/lib/node_modules/@idem/cli/bin/idem.js.
const prefix = join(root, "prefix");
const installed = script(join(prefix, "lib/node_modules/@idem/cli/bin/idem.js"));
const globalBin = link(installed, join(prefix, "bin/idem"));
// A clone: node_modules/.bin/idem -> ../../apps/cli/bin/idem.js.
const clone = join(root, "clone");
const cloneScript = script(join(clone, "apps/cli/bin/idem.js"));
const cloneBin = link(cloneScript, join(clone, "node_modules/.bin/idem"));
mkdirSync(join(clone, "work"));
const elsewhere = join(root, "elsewhere");
mkdirSync(elsewhere);
const PATH = ["/usr/bin", "/bin"].join(delimiter);

describe("invokedAs", () => {
  it("is `idem` for the idem on PATH, however it was started", () => {
    const path = [join(prefix, "bin"), PATH].join(delimiter);
    expect(invokedAs({ script: globalBin, path, cwd: elsewhere })).toBe("idem");
    expect(invokedAs({ script: installed, path, cwd: elsewhere })).toBe("idem");
  });

  it("is `npx idem` in the clone, also under npm run, which puts node_modules/.bin on the PATH of its child only", () => {
    const npmRunPath = [join(clone, "node_modules/.bin"), PATH].join(delimiter);
    expect(invokedAs({ script: "apps/cli/bin/idem.js", path: npmRunPath, cwd: clone })).toBe(
      "npx idem",
    );
    expect(invokedAs({ script: cloneBin, path: PATH, cwd: join(clone, "work") })).toBe("npx idem");
  });

  it("is the script's path when neither PATH nor node_modules/.bin leads to it, and never another idem", () => {
    const otherOnPath = [join(prefix, "bin"), PATH].join(delimiter);
    expect(invokedAs({ script: cloneScript, path: otherOnPath, cwd: elsewhere })).toBe(
      `node ${cloneScript}`,
    );
    expect(invokedAs({ script: globalBin, path: PATH, cwd: elsewhere })).toBe(globalBin);
  });

  it("quotes a path with spaces as one shell word", () => {
    const spaced = script(join(root, "my tools/idem.js"));
    expect(invokedAs({ script: spaced, path: PATH, cwd: elsewhere })).toBe(`node '${spaced}'`);
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(shellWord("/tmp/idem-demo/idem.config.json")).toBe("/tmp/idem-demo/idem.config.json");
  });
});
