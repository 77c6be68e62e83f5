// Issue 42, item 1: one damaged output row (a cut body, `null`, `effects: [null]`, a spec without
// its fields) stopped every interpreter, failed `idem ls` whole, sent a sound output's run dead
// through its supersede check, and `idem doctor` exited 0. Now each ends its own run dead (class
// integrity), every sound output beside it (same target and others) is applied once, `idem ls`
// lists all of them, `idem show` shows it damaged and `idem doctor` exits 3 naming each. The real
// CLI, on SQLite and on PostgreSQL.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { effectTargetsOf } from "@idem/effects";
import { openJournalStore } from "@idem/journal";
import { type AgentOutput, canonicalJson, journalLocationOf } from "@idem/schema";
import { startPostgres, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildForTest,
  createWorkspace,
  IDEM_BIN,
  trailerCounts,
  type Workspace,
} from "../chaos/interpreter-fixture.js";
import { DAMAGES, damageOutputRow } from "../support/damage-output.js";

const run = promisify(execFile);
let pg: Awaited<ReturnType<typeof startPostgres>>;

beforeAll(async () => {
  buildForTest("apps/cli");
  pg = await startPostgres();
}, 180_000);
afterAll(async () => {
  await pg?.stop();
});

async function idem(ws: Workspace, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, IDEM_LOG_LEVEL: "warn", NO_COLOR: "1" };
  delete env.IDEM_JOURNAL_URL;
  try {
    const r = await run(process.execPath, [IDEM_BIN, ...args, "--config", ws.configFile], { env });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const write = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [{ kind: "file.write", root: "outbox", path: "shared.txt", content: `${jobId}\n` }],
});
const commit = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [
    {
      kind: "git.commit",
      repo: "site",
      message: jobId,
      files: [{ path: `${jobId}.txt`, content: `${jobId}\n` }],
    },
  ],
});

/** Sound outputs on the outbox (one path: each supersedes the last) and on the repo, damaged ones between. */
const OUTPUTS: AgentOutput[] = [
  write("s1"),
  write("d-cut"),
  commit("s2"),
  write("d-null"),
  write("s3"),
  commit("d-nulleffect"),
  commit("s4"),
  write("d-bare"),
  write("s5"),
];
const SOUND = ["s1", "s2", "s3", "s4", "s5"];
const DAMAGED = ["d-cut", "d-null", "d-nulleffect", "d-bare"];

async function scenario(ws: Workspace, at: { path: string } | { url: string }) {
  const journal = await openJournalStore(journalLocationOf(ws.config));
  try {
    for (const o of OUTPUTS)
      await journal.outputs.record(o, { source: "test", targets: effectTargetsOf(o, ws.config) });
  } finally {
    await journal.close();
  }
  const body = (id: string) => canonicalJson(OUTPUTS.find((o) => o.jobId === id));
  await damageOutputRow(at, "d-cut", DAMAGES.cut(body("d-cut")), "kept");
  await damageOutputRow(at, "d-null", DAMAGES.null());
  await damageOutputRow(at, "d-nulleffect", DAMAGES.nullEffect(body("d-nulleffect")));
  await damageOutputRow(at, "d-bare", DAMAGES.bareSpec(body("d-bare")));

  const ls = await idem(ws, "ls", "--json");
  expect(ls.code, ls.stderr).toBe(0);
  const listed = JSON.parse(ls.stdout) as { jobId: string; damaged?: string }[];
  expect(listed.map((o) => o.jobId)).toEqual(OUTPUTS.map((o) => o.jobId));
  expect(listed.filter((o) => o.damaged).map((o) => o.jobId)).toEqual([
    "d-cut",
    "d-null",
    "d-nulleffect",
  ]);

  const interp = await idem(ws, "interpreter", "--once");
  expect(interp.stderr).not.toMatch(/claim failed/);

  // Every sound output applied once: the last write of the shared path wins, each commit once.
  expect(readFileSync(join(ws.outboxPath, "shared.txt"), "utf8")).toBe("s5\n");
  const trailers = await trailerCounts(ws.repoPath);
  expect(Object.fromEntries(trailers)).toEqual({ "s2/0": 1, "s4/0": 1 });
  expect(existsSync(join(ws.repoPath, "d-nulleffect.txt"))).toBe(false);

  const runs = new Map<string, { state: string; class: string | null; lastError: string }>();
  for (const id of [...SOUND, ...DAMAGED]) {
    const show = await idem(ws, "show", id, "--json");
    expect(show.code, `${id}: ${show.stderr}`).toBe(0);
    const view = JSON.parse(show.stdout);
    const last = view.runs.at(-1);
    runs.set(id, last);
    if (["d-cut", "d-null", "d-nulleffect"].includes(id)) {
      expect(view.output, id).toBeNull();
      expect(view.damaged.jobId).toBe(id);
    }
  }
  // s1 and s3 are superseded by s5 (skipped), the rest applied: all done.
  for (const id of SOUND) expect(runs.get(id)?.state, id).toBe("done");
  for (const id of DAMAGED) {
    expect(runs.get(id)?.state, id).toBe("dead");
    expect(runs.get(id)?.class, id).toBe("integrity");
    expect(runs.get(id)?.lastError, id).toContain(`job ${id}`);
    expect(runs.get(id)?.lastError, id).toContain('docs/runbook.md, "A damaged output"');
  }

  // A replay of it names the damage, not "no output recorded".
  const replay = await idem(ws, "replay", "--job", "d-null", "--dry-run");
  expect(replay.code).toBe(3);
  expect(replay.stderr).toContain("job d-null is damaged");

  const doctor = await idem(ws, "doctor", "--json");
  expect(doctor.code).toBe(3);
  const findings = JSON.stringify(JSON.parse(doctor.stdout));
  for (const id of DAMAGED) expect(findings).toContain(`output of job ${id} is damaged`);
}

describe("one damaged output row beside sound ones", () => {
  it("ends only its own run dead (integrity), on SQLite", async () => {
    await using dir = await tempDir("idem-damaged-sqlite-");
    const ws = await createWorkspace(dir.path, {}, { agents: { writer: { command: ["true"] } } });
    await scenario(ws, { path: ws.config.journal.path });
  });

  it("ends only its own run dead (integrity), on PostgreSQL", async () => {
    await using dir = await tempDir("idem-damaged-pg-");
    const url = await pg.createDatabase("damaged_outputs");
    const ws = await createWorkspace(
      dir.path,
      {},
      { journal: { url }, agents: { writer: { command: ["true"] } } },
    );
    await scenario(ws, { url });
  });
});
