import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createApprovalSweep, decideApproval, openEffects } from "@idem/core";
import { JOURNAL_EVENTS, type JournalStore } from "@idem/journal";
import { type AgentOutput, isIdemError, systemClock } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  createWorkspace,
  openWorkspaceJournal,
  recordAll,
  trailerCounts,
} from "../../../test/chaos/interpreter-fixture.js";
import { createInterpreter } from "../src/index.js";

const silent = pino({ level: "silent" });
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A file write (no rule), then a commit to site (gated by the rule on repo site). */
const output = (jobId: string, path = `c/${jobId}.txt`): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [
    { kind: "file.write", root: "outbox", path: `f/${jobId}.txt`, content: `file ${jobId}\n` },
    {
      kind: "git.commit",
      repo: "site",
      message: `commit of ${jobId}`,
      files: [{ path, content: `commit ${jobId}\n` }],
    },
  ],
});

async function setup(approvals: Record<string, unknown>) {
  const dir = await tempDir("idem-approvals-");
  const ws = await createWorkspace(dir.path, { leaseMs: 120_000 }, { approvals });
  const journal = await openWorkspaceJournal(ws);
  const effects = openEffects(ws.config);
  cleanup.push(async () => {
    await effects.close();
    await journal.close();
    await dir.remove();
  });
  const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
  return { ws, journal, interp };
}

const decide = (journal: JournalStore, input: Parameters<typeof decideApproval>[3]) =>
  decideApproval(journal, { expiryMs: 3_600_000 }, systemClock, input);

const refusedField = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (isIdemError(e)) return { code: e.code, field: e.details?.field };
    throw e;
  }
  throw new Error("expected a refusal");
};

describe("approval gates in the interpreter", () => {
  const SITE_RULE = { rules: [{ name: "site", kind: "git.commit", repo: "site" }] };

  it("waits before the gated effect, applies it once approved, never once rejected", async () => {
    const { ws, journal, interp } = await setup(SITE_RULE);
    await recordAll(journal, ws.config, [output("ok"), output("no")]);
    const first = await interp.drain();
    expect(first.runs.awaiting).toBe(2);
    expect((await journal.runs.latest("ok"))?.state).toBe("awaiting");
    // The effect before the gated one applied; the gated one did not.
    expect((await journal.ledger.forJob("ok", 1)).map((e) => [e.key, e.state])).toEqual([
      ["ok/0", "applied"],
    ]);
    expect((await trailerCounts(ws.repoPath)).size).toBe(0);
    const [requested] = await journal.events.list({
      jobId: "ok",
      type: JOURNAL_EVENTS.APPROVAL_REQUESTED,
    });
    expect(requested?.data).toMatchObject({ effects: [1], rules: ["site"] });

    // Bound to the digest: another output's digest approves nothing.
    expect(
      await refusedField(
        decide(journal, {
          jobId: "ok",
          approve: true,
          reason: "r",
          actor: "ana",
          digest: "f".repeat(64),
        }),
      ),
    ).toEqual({ code: "INVALID_STATE", field: "digest" });
    const approved = await decide(journal, {
      jobId: "ok",
      approve: true,
      reason: "reviewed",
      actor: "ana",
    });
    expect(approved).toMatchObject({ decision: "approved", effects: [1], generation: 1 });
    const rejected = await decide(journal, {
      jobId: "no",
      approve: false,
      reason: "not now",
      actor: "bo",
    });
    expect(rejected.decision).toBe("rejected");

    const second = await interp.drain();
    expect(second.runs.done).toBe(1);
    expect((await journal.runs.latest("ok"))?.state).toBe("done");
    expect(await journal.runs.latest("no")).toMatchObject({ state: "dead", class: "rejected" });
    expect((await journal.runs.latest("no"))?.lastError).toContain("rejected by bo: not now");
    const counts = await trailerCounts(ws.repoPath);
    expect(counts.get("ok/1")).toBe(1);
    expect(counts.has("no/1")).toBe(false);
    // Single-use: the approval was used; a second one is refused (the run is done).
    expect(
      await refusedField(decide(journal, { jobId: "ok", approve: true, reason: "r", actor: "a" })),
    ).toEqual({ code: "INVALID_STATE", field: "state" });
  });

  it("a replay needs a new approval by default (reapprove)", async () => {
    const { ws, journal, interp } = await setup(SITE_RULE);
    await recordAll(journal, ws.config, [output("a")]);
    await interp.drain();
    await decide(journal, { jobId: "a", approve: true, reason: "ok", actor: "ana" });
    await interp.drain();
    await journal.runs.replay({ jobIds: ["a"] }, { actor: "test" });
    const again = await interp.drain();
    expect(again.runs.awaiting).toBe(1);
    expect(await journal.runs.latest("a")).toMatchObject({ generation: 2, state: "awaiting" });
    expect((await trailerCounts(ws.repoPath)).get("a/1")).toBe(1);
  });

  it("with replay reuse, the approval of the same output carries to its replay", async () => {
    const { ws, journal, interp } = await setup({ ...SITE_RULE, replay: "reuse" });
    await recordAll(journal, ws.config, [output("a")]);
    await interp.drain();
    await decide(journal, { jobId: "a", approve: true, reason: "ok", actor: "ana" });
    await interp.drain();
    await journal.runs.replay({ jobIds: ["a"] }, { actor: "test" });
    const again = await interp.drain();
    expect(again.runs.done).toBe(1);
    expect((await journal.ledger.forJob("a", 2)).map((e) => e.state)).toEqual([
      "present",
      "present",
    ]);
  });

  it("a rule matching a commit's paths gates only those commits", async () => {
    const { ws, journal, interp } = await setup({
      rules: [{ name: "secrets", kind: "git.commit", match: { paths: "secret/**" } }],
    });
    await recordAll(journal, ws.config, [output("plain"), output("hidden", "secret/x/key.txt")]);
    const r = await interp.drain();
    expect(r.runs).toMatchObject({ done: 1, awaiting: 1 });
    expect((await journal.runs.latest("hidden"))?.state).toBe("awaiting");
  });

  it("posts a notice when a run starts waiting and a reminder before expiry, each once", async () => {
    const got: { type: string; jobId: string; effects: number[] }[] = [];
    let failNext = true;
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => {
        body += d.toString();
      });
      req.on("end", () => {
        // The first POST fails: the notice is sent again at the next sweep, not lost.
        if (failNext) {
          failNext = false;
          res.writeHead(503).end();
          return;
        }
        got.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const { ws, journal, interp } = await setup({
      ...SITE_RULE,
      expiryMs: 3_600_000,
      remindBeforeMs: 3_600_000,
      notify: { webhook: url },
    });
    await recordAll(journal, ws.config, [output("n")]);
    await interp.drain();
    const sweep = createApprovalSweep({
      journal,
      clock: systemClock,
      settings: ws.config.approvals,
      everyMs: 0,
    });
    const first = await sweep.sweep();
    expect(first.failures).toHaveLength(1);
    for (let i = 0; i < 3; i++) await sweep.sweep();
    expect(got.map((n) => [n.type, n.jobId, n.effects])).toEqual([
      ["approval.requested", "n", [1]],
      ["approval.reminder", "n", [1]],
    ]);
    const notices = await journal.events.list({ jobId: "n", type: JOURNAL_EVENTS.APPROVAL_NOTICE });
    expect(notices.map((e) => e.data?.type)).toEqual(["approval.requested", "approval.reminder"]);
  });
});
