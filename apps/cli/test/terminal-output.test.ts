// Agent and target text reaches the operator's terminal escaped (docs/security.md, a hostile
// agent): a summary with ESC[2J, an OSC 52 clipboard write, an OSC 8 hidden link, an 8-bit CSI and
// a right-to-left override, printed by the built CLI. `--json` keeps the exact text as JSON escapes.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { afterEach, describe, expect, it } from "vitest";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

/** Every byte a terminal acts on rather than prints (newline and tab aside, which JSON indents with). */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const HOSTILE =
  "done\u001b[2J\u001b]52;c;ZXZpbA==\u0007 see \u001b]8;;https://evil.example\u001b\\docs\u001b]8;;\u001b\\ \u009b31m red \u202egnp.exe\r\nforged line";

let ws: Workspace | undefined;
afterEach(() => {
  ws?.remove();
  ws = undefined;
});

describe("agent text on a terminal", () => {
  it("idem show escapes a hostile summary, and --json carries it exactly as JSON escapes", async () => {
    ws = workspace({ roots: { outbox: { path: "outbox" } } });
    const file = join(ws.dir, "output.json");
    writeFileSync(
      file,
      JSON.stringify({ jobId: "hostile-1", agent: "writer", summary: HOSTILE, effects: [] }),
    );
    const cfg = ["--config", ws.config];
    const submitted = await idem(["submit", file, ...cfg]);
    expect(submitted.code, submitted.stderr).toBe(0);

    const shown = await idem(["show", "hostile-1", ...cfg]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toMatch(RAW_CONTROL);
    expect(shown.stdout).toContain("summary: done\\e[2J\\e]52;c;ZXZpbA==\\x07 see");
    expect(shown.stdout).toContain("\\x9b31m red \\u202egnp.exe\\r\\nforged line");
    // The summary stays on its line: the agent cannot forge one of its own.
    expect(shown.stdout.split("\n").some((l) => l.startsWith("forged line"))).toBe(false);

    const json = await idem(["show", "hostile-1", "--json", ...cfg]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    expect(
      (JSON.parse(json.stdout) as { output: { output: { summary: string } } }).output.output
        .summary,
    ).toBe(HOSTILE);
  });

  it("idem dlq ls escapes a target's error text in the last error, and --json keeps it exact", async () => {
    ws = workspace({ roots: { outbox: { path: "outbox" } } });
    const cfg = ["--config", ws.config];
    const error = `cannot write outbox/\u001b]52;c;cm0gLXJm\u0007x.txt: EACCES at https://user:s3cret@hooks.example/x`;
    const journal = await openSqliteJournal(join(ws.dir, ".idem/journal.db"));
    try {
      const r = await journal.outputs.record(
        { jobId: "dead-1", agent: "writer", effects: [] },
        { source: "cli", targets: [] },
      );
      expect(r.status).toBe("recorded");
      const claim = await journal.runs.claim({ owner: "t", leaseMs: 60_000, maxLeaseExpiries: 3 });
      if (!claim) throw new Error("no claim");
      await journal.runs.markDead(claim.lease, { class: "logic", error });
    } finally {
      await journal.close();
    }
    const listed = await idem(["dlq", "ls", "--wide", ...cfg]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toMatch(RAW_CONTROL);
    expect(listed.stdout).toContain("outbox/\\e]52;c;cm0gLXJm\\x07x.txt");
    // A credential in it is not shown either (docs/security.md, Credentials).
    expect(listed.stdout).not.toContain("s3cret");

    const json = await idem(["dlq", "ls", "--json", ...cfg]);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    const runs = (JSON.parse(json.stdout) as { runs: { lastError: string }[] }).runs;
    expect(runs[0]?.lastError).toContain("outbox/\u001b]52;c;cm0gLXJm\u0007x.txt");
  });
});
