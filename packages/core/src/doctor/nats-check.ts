import { patternCovers } from "@idem/effects";
import {
  agentConsumerName,
  connectNats,
  effectiveAckWaitMs,
  jobSubject,
  jobsSubjects,
  nanos,
} from "@idem/nats";
import type { Config } from "@idem/schema";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import type { Finding } from "./doctor-checks.js";

// TODO(helper-2): replace with a read-only check exported by @idem/nats once it exists; the
// expected values here mirror ensureJobsStream / ensureAgentConsumer without changing anything.

interface Connection {
  jsm: JetStreamManager;
  close(): Promise<void>;
}

async function open(url: string, timeoutMs: number): Promise<Connection> {
  let timer: NodeJS.Timeout | undefined;
  const nc = await Promise.race([
    connectNats(url, "idem-doctor"),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  try {
    const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
    return { jsm, close: () => nc.close() };
  } catch (e) {
    await nc.close();
    throw e;
  }
}

function isNotFound(e: unknown): boolean {
  const err = e as { api_error?: { err_code?: number }; message?: string };
  const c = err?.api_error?.err_code;
  return c === 10059 || c === 10014 || /not found/i.test(String(err?.message ?? ""));
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Reads the jobs stream, each agent's consumer and every publish target's stream back from the
 * server and compares them with the config. Read-only: it never creates or updates anything (the
 * executor and `idem enqueue` do that).
 */
export async function checkNats(
  config: Config,
  options: { timeoutMs: number },
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const connections = new Map<string, Connection | Error>();
  const connection = async (url: string): Promise<Connection | Error> => {
    let c = connections.get(url);
    if (!c) {
      c = await open(url, options.timeoutMs).catch((e: unknown) => e as Error);
      connections.set(url, c);
    }
    return c;
  };
  try {
    const nats = config.nats;
    if (nats) {
      const c = await connection(nats.url);
      if (c instanceof Error) {
        findings.push({
          severity: "violation",
          key: "nats.url",
          finding: `cannot reach NATS at ${nats.url}: ${c.message}`,
          fix: "start nats-server with JetStream (-js), or fix nats.url / NATS_URL; enqueue and the executor wait for it (docs/runbook.md, NATS outage)",
        });
      } else {
        await checkJobsStream(c.jsm, config, findings);
      }
    }
    for (const [alias, t] of Object.entries(config.publish)) {
      const url = t.url ?? nats?.url;
      const key = `publish.${alias}`;
      if (!url) {
        findings.push({
          severity: "violation",
          key: `${key}.url`,
          finding: "no NATS server: the target has no url and there is no nats section or NATS_URL",
          fix: `set ${key}.url or configure nats`,
        });
        continue;
      }
      const c = await connection(url);
      if (c instanceof Error) {
        if (url !== nats?.url) {
          findings.push({
            severity: "violation",
            key: `${key}.url`,
            finding: `cannot reach NATS at ${url}: ${c.message}`,
            fix: "start that server or fix the url; its publishes fail and retry until it answers",
          });
        }
        continue;
      }
      try {
        const info = await c.jsm.streams.info(t.stream);
        if (!(info.config.subjects ?? []).some((s) => patternCovers(s, t.subjectPrefix))) {
          findings.push({
            severity: "violation",
            key: `${key}.stream`,
            finding: `stream ${t.stream} does not capture ${t.subjectPrefix}.> (it has ${JSON.stringify(info.config.subjects)})`,
            fix: `add ${t.subjectPrefix}.> to the stream's subjects or fix ${key}.subjectPrefix`,
          });
        }
      } catch (e) {
        findings.push({
          severity: "violation",
          key: `${key}.stream`,
          finding: isNotFound(e)
            ? `stream ${t.stream} does not exist on ${url}`
            : `cannot read stream ${t.stream}: ${(e as Error).message}`,
          fix: `create it: nats stream add ${t.stream} --subjects '${t.subjectPrefix}.>'`,
        });
      }
    }
  } finally {
    for (const c of connections.values()) if (!(c instanceof Error)) await c.close();
  }
  return findings;
}

async function checkJobsStream(
  jsm: JetStreamManager,
  config: Config,
  findings: Finding[],
): Promise<void> {
  const nats = config.nats as NonNullable<Config["nats"]>;
  let stream: Awaited<ReturnType<JetStreamManager["streams"]["info"]>>;
  try {
    stream = await jsm.streams.info(nats.stream);
  } catch (e) {
    findings.push({
      severity: isNotFound(e) ? "warning" : "violation",
      key: "nats.stream",
      finding: isNotFound(e)
        ? `stream ${nats.stream} does not exist yet`
        : `cannot read stream ${nats.stream}: ${(e as Error).message}`,
      fix: "start `idem executor` or run `idem enqueue` once: both create it",
    });
    return;
  }
  const expected: [string, unknown, unknown][] = [
    ["subjects", jobsSubjects(nats.subjectPrefix), stream.config.subjects],
    ["max_age", nanos(nats.maxAgeMs), stream.config.max_age],
    ["duplicate_window", nanos(nats.duplicateWindowMs), stream.config.duplicate_window],
    ["storage", "file", stream.config.storage],
  ];
  for (const [field, want, got] of expected) {
    if (!same(want, got)) {
      findings.push({
        severity: "violation",
        key: "nats.stream",
        finding: `stream ${nats.stream}: ${field} is ${JSON.stringify(got)} on the server, expected ${JSON.stringify(want)}`,
        fix:
          field === "storage"
            ? "JetStream cannot change it: delete the stream when it is empty and let the executor recreate it"
            : "restart `idem executor` (it updates the stream in place), or fix the config",
      });
    }
  }
  const queue = config.queue;
  for (const agent of Object.keys(config.agents)) {
    const name = agentConsumerName(agent);
    let info: Awaited<ReturnType<JetStreamManager["consumers"]["info"]>>;
    try {
      info = await jsm.consumers.info(nats.stream, name);
    } catch (e) {
      findings.push({
        severity: isNotFound(e) ? "warning" : "violation",
        key: `agents.${agent}`,
        finding: isNotFound(e)
          ? `consumer ${name} does not exist yet: no executor has run for ${agent}`
          : `cannot read consumer ${name}: ${(e as Error).message}`,
        fix: "start `idem executor`: it creates its consumers",
      });
      continue;
    }
    const checks: [string, unknown, unknown][] = [
      ["filter_subject", jobSubject(nats.subjectPrefix, agent), info.config.filter_subject],
      ["ack_policy", "explicit", info.config.ack_policy],
      ["ack_wait", nanos(effectiveAckWaitMs(queue)), info.config.ack_wait],
      ["max_deliver", queue.maxDeliver, info.config.max_deliver],
      ["backoff", queue.backoffMs.map(nanos), info.config.backoff ?? []],
      ["max_ack_pending", queue.maxAckPending, info.config.max_ack_pending],
    ];
    for (const [field, want, got] of checks) {
      if (!same(want, got)) {
        findings.push({
          severity: "violation",
          key: `queue (consumer ${name})`,
          finding: `${field} is ${JSON.stringify(got)} on the server, expected ${JSON.stringify(want)}`,
          fix: "restart `idem executor` (it updates the consumer), or delete the consumer and let it recreate it",
        });
      }
    }
  }
}
