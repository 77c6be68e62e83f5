import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { type AgentOutput, parseConfig } from "@idem/schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { initialConfig, initWorkspace } from "../src/doctor/init-workspace.js";
import { runDoctor } from "../src/doctor/run-doctor.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "idem-init-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function load(raw: unknown) {
  const r = parseConfig(raw, { dir, file: join(dir, "idem.config.json") });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

describe("initialConfig", () => {
  it("is a valid config whose journal and archive sit under .idem beside the config file", () => {
    const config = load(initialConfig());
    expect(config.journal.path).toBe(join(dir, ".idem/journal.db"));
    expect(config.journal.archiveDir).toBe(join(dir, ".idem/archive"));
    expect(config.journal.synchronous).toBe("FULL");
    expect(config.journal.retentionDays).toBeNull();
  });

  it("carries a new random api.token each time, so a new workspace's API and console need one", () => {
    const a = load(initialConfig()).api.token;
    const b = load(initialConfig()).api.token;
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });
});

describe("initWorkspace", () => {
  it("creates the journal and the archive folder, and a doctor then finds no violation", async () => {
    const config = load(initialConfig());
    await initWorkspace(config);
    expect(existsSync(config.journal.path)).toBe(true);
    expect(statSync(config.journal.archiveDir).isDirectory()).toBe(true);
    expect((await runDoctor(config)).ok).toBe(true);
  });

  it("leaves an existing journal and its outputs as they are when run again", async () => {
    const config = load({ ...initialConfig(), roots: { out: { path: "." } } });
    await initWorkspace(config);
    const journal = await openSqliteJournal(config.journal.path);
    try {
      await journal.outputs.record(
        {
          jobId: "kept",
          agent: "a",
          effects: [{ kind: "file.write", root: "out", path: "x", content: "x" }],
        } as AgentOutput,
        { source: "cli", targets: [] },
      );
    } finally {
      await journal.close();
    }
    await initWorkspace(config);
    const again = await openSqliteJournal(config.journal.path);
    try {
      expect(await again.outputs.has("kept")).toBe(true);
    } finally {
      await again.close();
    }
  });
});
