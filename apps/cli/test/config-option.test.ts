import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const IDEM = join(import.meta.dirname, "../bin/idem.js");

describe("--config", () => {
  it("is honoured before and after the subcommand, and nothing is created in the working directory", async () => {
    await using dir = await tempDir("idem-config-option-");
    const config = join(dir.path, "deep", "idem.config.json");
    const cwd = join(dir.path, "elsewhere");
    mkdirSync(join(dir.path, "deep"));
    mkdirSync(cwd);
    await run(process.execPath, [IDEM, "init", "--config", config], { cwd });
    const after = await run(process.execPath, [IDEM, "status", "--json", "--config", config], {
      cwd,
    });
    const before = await run(process.execPath, [IDEM, "--config", config, "status", "--json"], {
      cwd,
    });
    expect(JSON.parse(after.stdout).outputs).toBe(0);
    expect(JSON.parse(before.stdout).outputs).toBe(0);
    expect(existsSync(join(dir.path, "deep", ".idem", "journal.db"))).toBe(true);
    expect(existsSync(join(cwd, ".idem"))).toBe(false);
    expect(existsSync(join(cwd, "idem.config.json"))).toBe(false);
  });

  it("exits 2 naming the key of an invalid config", async () => {
    await using dir = await tempDir("idem-config-invalid-");
    const config = join(dir.path, "idem.config.json");
    writeFileSync(config, '{"queue": {"maxDeliver": "three"}}');
    const r = await run(process.execPath, [IDEM, "status", "--config", config]).catch((e) => e);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/queue\.maxDeliver/);
  });
});
