import { type ApprovalNotice, createApprovalSweep, loadKinds, openEffects } from "@idem/core";
import { APPROVAL_NOTICE_EFFECTS } from "@idem/effects";
import { JOURNAL_EVENTS, type JournalStore } from "@idem/journal";
import { closeNats, connectNats, createSubjectPublisher, type SubjectPublisher } from "@idem/nats";
import {
  type AgentOutput,
  type IdemError,
  isIdemError,
  NatsConfigSchema,
  parseConfig,
  systemClock,
} from "@idem/schema";
import { type NatsServerHandle, startNatsServer, startSlackStandIn, tempDir } from "@idem/testing";
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
/**
 * With `section`, the sweep is given the notice without its `url` and a `nats` section at that URL
 * instead (the config's own servers).
 */
async function awaiting(
  notify: { nats: { subject: string; url: string } },
  publisher?: SubjectPublisher,
  section?: boolean,
) {
  const dir = await tempDir("idem-notices-");
  const approvals = { rules: SITE_RULE, expiryMs: 3_600_000, remindBeforeMs: 3_600_000, notify };
  const ws = await createWorkspace(dir.path, { leaseMs: 120_000 }, { approvals });
  const journal = await openWorkspaceJournal(ws);
  const effects = openEffects(ws.config);
  const sweep = createApprovalSweep({
    journal,
    clock: systemClock,
    settings: section
      ? { ...ws.config.approvals, notify: { nats: { subject: notify.nats.subject } } }
      : ws.config.approvals,
    everyMs: 0,
    ...(publisher ? { publisher } : {}),
    ...(section ? { nats: NatsConfigSchema.parse({ url: notify.nats.url }) } : {}),
  });
  cleanup.push(async () => {
    await sweep.close();
    await effects.close();
    await journal.close();
    await dir.remove();
  });
  await recordAll(journal, ws.config, [output("n")]);
  // Parked by an interpreter that sends no notice, so the sweep here is the only sender.
  const quiet = { ...ws.config, approvals: { ...ws.config.approvals, notify: null } };
  const interp = createInterpreter({ config: quiet, journal, effects, logger: silent });
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

  it("publishes with core NATS (the nats section's servers) when no stream captures it; a failure is retried at the next sweep", async () => {
    const server = await nats();
    await server.kill("SIGKILL");
    const { sweep, sent } = await awaiting(
      { nats: { subject: "ops.approvals", url: server.url } },
      undefined,
      true,
    );
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

  it("refuses a NATS notice with neither url nor nats section, an empty notify, an agent named idem", async () => {
    const r = parseConfig(
      { approvals: { notify: { nats: { subject: "ops.approvals" } } } },
      { dir: "/tmp" },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.path)).toContain("approvals.notify.nats.url");
    const empty = parseConfig({ approvals: { notify: {} } }, { dir: "/tmp" });
    expect(empty.ok).toBe(false);
    if (!empty.ok) expect(empty.issues.map((i) => i.path)).toContain("approvals.notify");
    const reserved = parseConfig(
      {
        agents: { idem: { command: ["node", "a.mjs"] } },
        approvals: { notify: { slack: { channel: "ops" } } },
      },
      { dir: "/tmp" },
    );
    expect(reserved.ok).toBe(false);
    if (!reserved.ok) expect(reserved.issues.map((i) => i.path)).toContain("agents.idem");
  });
});

describe("approval notices recorded as Slack messages", () => {
  it("records each notice as an output of its own, applied once after a crash between record and event", async () => {
    await using sl = await startSlackStandIn();
    const ops = sl.createChannel({ name: "ops" });
    const dir = await tempDir("idem-notices-slack-");
    const approvals = {
      rules: SITE_RULE,
      expiryMs: 3_600_000,
      remindBeforeMs: 3_600_000,
      notify: { slack: { channel: "ops" } },
    };
    const slack = { baseUrl: sl.url, tokenEnv: "SLACK_TOKEN", channels: { ops } };
    const ws = await createWorkspace(dir.path, { leaseMs: 120_000 }, { approvals, slack });
    const journal = await openWorkspaceJournal(ws);
    const effects = openEffects(ws.config, { env: { SLACK_TOKEN: sl.token } });
    cleanup.push(async () => {
      await effects.close();
      await journal.close();
      await dir.remove();
    });
    await recordAll(journal, ws.config, [output("n")]);
    // Parked by an interpreter that sends no notice, so the sweeps below are the only senders.
    const quiet = { ...ws.config, approvals: { ...ws.config.approvals, notify: null } };
    const parker = createInterpreter({ config: quiet, journal, effects, logger: silent });
    expect((await parker.drain()).runs.awaiting).toBe(1);

    // The first notice's output is recorded, then the process dies before its event.
    let crash = true;
    const events = Object.create(journal.events, {
      append: {
        value: async (e: Parameters<typeof journal.events.append>[0]) => {
          if (crash && e.type === JOURNAL_EVENTS.APPROVAL_NOTICE) {
            crash = false;
            throw new Error("killed after the record, before its event");
          }
          return await journal.events.append(e);
        },
      },
    });
    const sweep = createApprovalSweep({
      journal: Object.create(journal, { events: { value: events } }),
      clock: systemClock,
      settings: ws.config.approvals,
      everyMs: 0,
      record: { config: ws.config, kinds: effects.kinds, effects: APPROVAL_NOTICE_EFFECTS },
    });
    await expect(sweep.sweep()).rejects.toThrow(/killed after the record/);
    for (let i = 0; i < 3; i++) expect((await sweep.sweep()).failures).toEqual([]);
    const notices = await journal.events.list({ jobId: "n", type: JOURNAL_EVENTS.APPROVAL_NOTICE });
    expect(notices.map((e) => [e.data?.type, e.data?.to])).toEqual([
      ["approval.requested", "slack"],
      ["approval.reminder", "slack"],
    ]);
    const waiting = await journal.outputs.get("idem-approval-notice:n:1:waiting");
    expect(waiting?.agent).toBe("idem");

    // The interpreter applies the notices' outputs like any effect: once each, twice drained.
    const interp = createInterpreter({ config: ws.config, journal, effects, logger: silent });
    await interp.drain();
    await interp.drain();
    const posted = sl
      .messages(ops)
      .filter((m) => m.botId)
      .map((m) => m.text);
    expect(posted).toHaveLength(2);
    expect(posted[0]).toMatch(/^Waiting for a person's approval: job n \(agent writer/);
    expect(posted[1]).toMatch(/^Reminder: still waiting/);
    expect((await journal.runs.latest("n"))?.state).toBe("awaiting");
    sl.assertNoViolations();
  }, 120_000);

  it("refuses at start a Slack notice whose channel the slack section does not have", async () => {
    const parsed = parseConfig(
      {
        slack: { channels: { ops: "C0OPS" } },
        approvals: { notify: { slack: { channel: "nope" } } },
      },
      { dir: "/tmp" },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const kinds = await loadKinds(parsed.config);
    const record = { config: parsed.config, kinds, effects: APPROVAL_NOTICE_EFFECTS };
    let refused: unknown;
    try {
      createApprovalSweep({ journal: {} as JournalStore, clock: systemClock, record });
    } catch (e) {
      refused = e;
    }
    expect(isIdemError(refused, "INVALID_CONFIG")).toBe(true);
    expect((refused as Error).message).toMatch(/^approvals\.notify\.slack\.channel: /);
    expect((refused as IdemError).details?.key).toBe("approvals.notify.slack.channel");
  });
});
