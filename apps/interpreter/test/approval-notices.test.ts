import { type ApprovalNotice, createApprovalSweep, openEffects } from "@idem/core";
import { JOURNAL_EVENTS } from "@idem/journal";
import { closeNats, connectNats, createSubjectPublisher, type SubjectPublisher } from "@idem/nats";
import { type AgentOutput, parseConfig, systemClock } from "@idem/schema";
import { type NatsServerHandle, startNatsServer, tempDir } from "@idem/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  createWorkspace,
  openWorkspaceJournal,
  recordAll,
} from "../../../test/chaos/interpreter-fixture.js";
import { createInterpreter } from "../src/index.js";

const silent = pino({ level: "silent" });
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const SITE_RULE = [{ name: "site", kind: "git.commit", repo: "site" }];

/** A commit to site, gated by the rule on repo site. */
const output = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [
    {
      kind: "git.commit",
      repo: "site",
      message: `commit of ${jobId}`,
      files: [{ path: `c/${jobId}.txt`, content: `commit ${jobId}\n` }],
    },
  ],
});

async function nats(): Promise<NatsServerHandle> {
  const server = await startNatsServer();
  cleanup.push(() => server.stop());
  return server;
}

/** A workspace whose run `n` awaits approval, and a sweep over it that sends its notices. */
async function awaiting(notify: Record<string, unknown>, publisher?: SubjectPublisher) {
  const dir = await tempDir("idem-notices-");
  const approvals = { rules: SITE_RULE, expiryMs: 3_600_000, remindBeforeMs: 3_600_000, notify };
  const ws = await createWorkspace(dir.path, { leaseMs: 120_000 }, { approvals });
  const journal = await openWorkspaceJournal(ws);
  const effects = openEffects(ws.config);
  const sweep = createApprovalSweep({
    journal,
    clock: systemClock,
    settings: ws.config.approvals,
    everyMs: 0,
    ...(publisher ? { publisher } : {}),
  });
  cleanup.push(async () => {
    await sweep.close();
    await effects.close();
    await journal.close();
    await dir.remove();
  });
  await recordAll(journal, ws.config, [output("n")]);
  const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
  expect((await interp.drain()).runs.awaiting).toBe(1);
  const sent = async () =>
    (await journal.events.list({ jobId: "n", type: JOURNAL_EVENTS.APPROVAL_NOTICE })).map((e) => [
      e.data?.type,
      e.data?.to,
    ]);
  return { sweep, sent };
}

describe("approval notices on a NATS subject", () => {
  it("publishes with JetStream when a stream captures the subject: a retry is deduplicated", async () => {
    const server = await nats();
    const nc = await connectNats(server.url, "test");
    cleanup.push(async () => void (await closeNats(nc)));
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "APPROVALS", subjects: ["approvals.>"] });
    // The first publish lands, then the process "crashes" before its event: the next sweep
    // publishes again with the same Nats-Msg-Id, which the stream drops.
    const real = createSubjectPublisher();
    cleanup.push(() => real.close());
    let crashAfterFirst = true;
    const publisher: SubjectPublisher = {
      async publish(url, subject, data, msgId) {
        const how = await real.publish(url, subject, data, msgId);
        if (crashAfterFirst) {
          crashAfterFirst = false;
          throw new Error("killed after the publish, before its event");
        }
        return how;
      },
      close: () => real.close(),
    };
    const { sweep, sent } = await awaiting(
      { nats: { subject: "approvals.waiting", url: server.url } },
      publisher,
    );
    expect((await sweep.sweep()).failures).toHaveLength(1);
    expect(await sent()).toEqual([]);
    for (let i = 0; i < 3; i++) await sweep.sweep();
    expect(await sent()).toEqual([
      ["approval.requested", "nats"],
      ["approval.reminder", "nats"],
    ]);
    const info = await jsm.streams.info("APPROVALS");
    expect(info.state.messages).toBe(2);
    const first = await jsm.streams.getMessage("APPROVALS", { seq: 1 });
    const notice = first?.json<ApprovalNotice>();
    expect(notice?.type).toBe("approval.requested");
    expect(notice?.jobId).toBe("n");
    expect(first?.header?.get("Nats-Msg-Id")).toBe(notice?.id);
  }, 60_000);

  it("publishes with core NATS when no stream captures it; a failure is retried at the next sweep", async () => {
    const server = await nats();
    await server.kill("SIGKILL");
    const { sweep, sent } = await awaiting({ nats: { subject: "ops.approvals", url: server.url } });
    const down = await sweep.sweep();
    expect(down.failures).toHaveLength(1);
    expect(down.failures[0]).toMatch(/^n \(nats\): /);
    await server.restart();
    const nc = await connectNats(server.url, "test");
    cleanup.push(async () => void (await closeNats(nc)));
    const got: ApprovalNotice[] = [];
    const sub = nc.subscribe("ops.approvals", {
      callback: (_e, m) => {
        got.push(m.json());
      },
    });
    await nc.flush();
    for (let i = 0; i < 3; i++) await sweep.sweep();
    await nc.flush();
    for (let i = 0; i < 100 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    sub.unsubscribe();
    expect(got.map((n) => [n.type, n.jobId, n.id])).toEqual([
      ["approval.requested", "n", "approval.requested/n/1"],
      ["approval.reminder", "n", "approval.reminder/n/1"],
    ]);
    expect(await sent()).toEqual([
      ["approval.requested", "nats"],
      ["approval.reminder", "nats"],
    ]);
  }, 60_000);

  it("refuses a NATS notice with neither a url nor a nats section", async () => {
    const r = parseConfig(
      { approvals: { notify: { nats: { subject: "ops.approvals" } } } },
      { dir: "/tmp" },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.path)).toContain("approvals.notify.nats.url");
    const empty = parseConfig({ approvals: { notify: {} } }, { dir: "/tmp" });
    expect(empty.ok).toBe(false);
    if (!empty.ok) expect(empty.issues.map((i) => i.path)).toContain("approvals.notify");
  });
});
