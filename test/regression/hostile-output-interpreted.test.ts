// Issue 31: outputs recorded before today's checks (or by a journal copied from an older idem) are
// checked again at apply. What can never succeed ends as a validation failure, never `uncertain`
// (nothing was sent) nor a transient error retried until the attempts run out; a file.write into a
// folder where a killed writer left its temporary file removes that file.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { openEffects } from "@idem/core";
import { effectTargetsOf } from "@idem/effects";
import { createInterpreter } from "@idem/interpreter";
import { silentLogger } from "@idem/runtime";
import type { AgentOutput } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import {
  createWorkspace,
  openWorkspaceJournal,
  type Workspace,
} from "../chaos/interpreter-fixture.js";

/** Records `outputs` as an older idem would have (no validation), then drains an interpreter. */
async function interpret(ws: Workspace, outputs: AgentOutput[]) {
  const journal = await openWorkspaceJournal(ws);
  const effects = openEffects(ws.config);
  try {
    for (const o of outputs) {
      await journal.outputs.record(o, { source: "test", targets: effectTargetsOf(o, ws.config) });
    }
    const interpreter = createInterpreter({
      config: { ...ws.config, interpreter: { ...ws.config.interpreter, backoffMs: [10] } },
      journal,
      effects,
      logger: silentLogger(),
    });
    const result = await interpreter.drain();
    const ledger = new Map<string, string>();
    for (const o of outputs) {
      for (const row of await journal.ledger.forJob(o.jobId)) ledger.set(row.key, row.state);
    }
    return { result, ledger };
  } finally {
    await effects.close();
    await journal.close();
  }
}

describe("hostile outputs recorded before the checks (issue 31)", () => {
  it("an http header fetch cannot send ends as a validation failure, not uncertain, and sends nothing", async () => {
    const requests: IncomingMessage[] = [];
    const server = createServer((req, res) => {
      requests.push(req);
      res.end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      await using dir = await tempDir("idem-hostile-http-");
      const { port } = server.address() as AddressInfo;
      const ws = await createWorkspace(
        dir.path,
        {},
        {
          http: { targets: { hooks: { baseUrl: `http://127.0.0.1:${port}/api` } } },
        },
      );
      const out = (jobId: string, extra: Record<string, unknown>): AgentOutput => ({
        jobId,
        agent: "writer",
        effects: [
          { kind: "http.request", target: "hooks", method: "POST", path: "/hook", ...extra },
        ] as AgentOutput["effects"],
      });
      const { result, ledger } = await interpret(ws, [
        out("euro", { headers: { "X-Price": "5 \u20ac" } }),
        out("ctl", { headers: { "X-A": "a\u0001b" } }),
        out("dots", { path: "/x/..;/admin" }),
      ]);
      expect(result.dead.map((d) => [d.jobId, d.class]).sort()).toEqual([
        ["ctl", "validation"],
        ["dots", "validation"],
        ["euro", "validation"],
      ]);
      expect([...ledger.values()]).not.toContain("uncertain");
      expect(requests).toHaveLength(0);
    } finally {
      server.close();
    }
  });

  it("a path segment over 255 bytes ends as a validation failure for git and file effects", async () => {
    await using dir = await tempDir("idem-hostile-long-");
    const ws = await createWorkspace(dir.path);
    const long = `d/${"s".repeat(300)}.txt`;
    const { result } = await interpret(ws, [
      {
        jobId: "long-commit",
        agent: "writer",
        effects: [
          { kind: "git.commit", repo: "site", message: "m", files: [{ path: long, content: "x" }] },
        ],
      },
      {
        jobId: "long-file",
        agent: "writer",
        effects: [{ kind: "file.write", root: "outbox", path: long, content: "x" }],
      },
    ]);
    expect(result.dead.map((d) => [d.jobId, d.class]).sort()).toEqual([
      ["long-commit", "validation"],
      ["long-file", "validation"],
    ]);
  });

  it("a file.write removes the temporary files a killed writer left in its folder", async () => {
    await using dir = await tempDir("idem-hostile-tmp-");
    const ws = await createWorkspace(dir.path);
    const folder = join(ws.outboxPath, "f");
    mkdirSync(folder, { recursive: true });
    // A writer that is gone: a real process that has exited.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
    const deadPid = Number(dead.stdout.toString());
    const left = `.idem-${deadPid}-0123456789ab.tmp`;
    // One from before names carried a pid, an hour and more old; one of a live writer (our parent).
    const legacy = ".idem-a1b2c3d4e5f6.tmp";
    const live = `.idem-${process.ppid}-ba9876543210.tmp`;
    const recentLegacy = ".idem-00aa11bb22cc.tmp";
    for (const name of [left, legacy, live, recentLegacy])
      writeFileSync(join(folder, name), "half");
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(join(folder, legacy), old, old);
    // Not idem's: kept whatever its age.
    writeFileSync(join(folder, ".idem-notes.tmp"), "mine");
    const { result } = await interpret(ws, [
      {
        jobId: "after-kill",
        agent: "writer",
        effects: [{ kind: "file.write", root: "outbox", path: "f/out.txt", content: "whole\n" }],
      },
    ]);
    expect(result.runs.done).toBe(1);
    expect(readdirSync(folder).sort()).toEqual(
      [".idem-notes.tmp", live, recentLegacy, "out.txt"].sort(),
    );
    expect(existsSync(join(folder, left))).toBe(false);
  });
});
