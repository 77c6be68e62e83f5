import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { commitSpec, type OpsFixture, opsFixture } from "./ops-fixture.js";
import { idem } from "./ops-helpers.js";

// What can never succeed is refused before anything is read or recorded: a replay that would
// create generations without --reason, and an effect filter naming what the config does not have.

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** The journal's files, byte for byte. */
function journalBytes(path: string): Buffer[] {
  return [path, `${path}-wal`].map((p) => (existsSync(p) ? readFileSync(p) : Buffer.alloc(0)));
}

async function oneDone(): Promise<OpsFixture> {
  fx = await opsFixture();
  await fx.record("job-1", [
    commitSpec("a.txt", "a\n"),
    { kind: "file.write", root: "outbox", path: "o.txt", content: "o\n" },
  ]);
  expect((await fx.interpret()).runs.done).toBe(1);
  await fx.journal.close();
  return fx;
}

describe("idem replay refuses", () => {
  it("a replay that creates generations without --reason (exit 2, nothing recorded); a dry run needs none", async () => {
    const f = await oneDone();
    const cfg = ["--config", f.ws.config];
    const before = journalBytes(f.journalPath);
    for (const reason of [[], ["--reason", "  "]]) {
      const r = await idem(["replay", "--all", "--yes", "--now", ...reason, ...cfg]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("--reason");
      expect(journalBytes(f.journalPath)).toEqual(before);
    }
    const dry = await idem(["replay", "--all", "--dry-run", "--json", ...cfg]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ only: null, kept: [], untouched: [] });
    expect(journalBytes(f.journalPath)).toEqual(before);
  });

  it.each([
    ["--kind", "http.post", "effect kind"],
    ["--repo", "docs", "repo in the config"],
    ["--root", "nowhere", "root in the config"],
    ["--target", "hooks", "target in the config"],
  ])(
    "an unknown name, %s %s: a usage error naming the option, dry run or not, nothing recorded",
    async (flag, value, says) => {
      const f = await oneDone();
      const cfg = ["--config", f.ws.config];
      const before = journalBytes(f.journalPath);
      for (const mode of [["--dry-run"], ["--yes", "--reason", "r"]]) {
        const r = await idem(["replay", "--all", flag, value, ...mode, ...cfg]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`${flag} "${value}"`);
        expect(r.stderr).toContain(says);
        expect(r.stdout).toBe("");
        expect(journalBytes(f.journalPath)).toEqual(before);
      }
      // A known name next to the unknown one does not let it through.
      const mixed = await idem([
        "replay",
        "--all",
        "--kind",
        "git.commit",
        flag,
        value,
        "--dry-run",
        ...cfg,
      ]);
      expect(mixed.code).toBe(2);
    },
  );

  it("leaves alone, with a filter, an output whose latest run is dead: its other effects stay visible to idem dlq", async () => {
    fx = await opsFixture();
    const cfg = ["--config", fx.ws.config];
    // A patch that applies neither way: the run goes dead on it, the file.write after it never ran.
    const patch = "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-nope\n+yes\n";
    await fx.record("job-1", [
      { kind: "git.patch", repo: "site", message: "p", patch },
      { kind: "file.write", root: "outbox", path: "o.txt", content: "o\n" },
    ]);
    expect((await fx.interpret()).dead.map((d) => [d.jobId, d.class])).toEqual([
      ["job-1", "conflict"],
    ]);
    const dry = await idem(["replay", "--all", "--root", "outbox", "--dry-run", "--json", ...cfg]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ plan: [], dead: ["job-1"], outputs: 0 });
    const human = await idem(["replay", "--all", "--root", "outbox", "--dry-run", ...cfg]);
    expect(human.stdout).toContain("latest run is dead are left alone");
    const run = await idem([
      "replay",
      "--all",
      "--root",
      "outbox",
      "--reason",
      "r",
      "--yes",
      "--json",
      ...cfg,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ dead: ["job-1"], created: [] });
    expect((await fx.journal.runs.forJob("job-1")).map((r) => r.state)).toEqual(["dead"]);
    const dlq = await idem(["dlq", "ls", "--json", ...cfg]);
    expect(JSON.parse(dlq.stdout).runs.map((r: { jobId: string }) => r.jobId)).toEqual(["job-1"]);
  });
});
