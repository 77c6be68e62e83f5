import {
  agentConsumerName,
  type FieldDifference,
  inspectAgentConsumer,
  inspectJobsStream,
  type JetStreamInspector,
  openJetStreamInspector,
} from "@idem/nats";
import { type Config, type NatsConfig, natsServers } from "@idem/schema";
import type { Finding } from "./finding.js";

/**
 * Reads the jobs stream and each agent's consumer back from the server and compares them with
 * what @idem/nats provisions for this config (`expectedJobsStream`, `expectedAgentConsumer`); the
 * publish targets' streams are nats.publish's own check (its `doctor`). Read-only: it never
 * creates or updates anything (the executor and `idem enqueue` do that). A stream or consumer not created yet is a
 * warning; an unreachable server, an unreadable or differing stream or consumer is a violation.
 * Never throws: every failure is a finding. One connection, bounded by `timeoutMs`.
 */
export async function checkNats(
  config: Config,
  options: { timeoutMs: number },
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const nats = config.nats;
  if (!nats) return findings;
  const servers = natsServers(nats);
  const c = await openJetStreamInspector(servers, {
    timeoutMs: options.timeoutMs,
    name: "idem-doctor",
  }).catch((e: unknown) => e as Error);
  if (c instanceof Error) {
    findings.push({
      severity: "violation",
      key: nats.servers.length > 0 ? "nats.servers" : "nats.url",
      finding: `cannot reach NATS at ${servers}: ${c.message}`,
      fix: "start nats-server with JetStream (-js), or fix nats.url / NATS_URL; enqueue and the executor wait for it (docs/runbook.md, NATS outage)",
    });
    return findings;
  }
  try {
    await checkJobsStream(c, config, nats, findings);
  } finally {
    await c.close();
  }
  return findings;
}

const shown = (d: FieldDifference) =>
  `${d.field} is ${JSON.stringify(d.actual)} on the server, expected ${JSON.stringify(d.expected)}`;

async function checkJobsStream(
  inspector: JetStreamInspector,
  config: Config,
  nats: NatsConfig,
  findings: Finding[],
): Promise<void> {
  let stream: FieldDifference[] | "missing";
  try {
    stream = await inspectJobsStream(inspector, nats);
  } catch (e) {
    findings.push({
      severity: "violation",
      key: "nats.stream",
      finding: `cannot read stream ${nats.stream}: ${(e as Error).message}`,
      fix: "on a cluster, check that a majority of its nodes is up (JetStream answers nothing without quorum); otherwise start `idem executor` or run `idem enqueue` once: both create it",
    });
    return;
  }
  if (stream === "missing") {
    findings.push({
      severity: "warning",
      key: "nats.stream",
      finding: `stream ${nats.stream} does not exist yet`,
      fix: "start `idem executor` or run `idem enqueue` once: both create it",
    });
    return;
  }
  for (const d of stream) {
    findings.push({
      severity: "violation",
      key: "nats.stream",
      finding: `stream ${nats.stream}: ${shown(d)}`,
      fix: d.immutable
        ? "JetStream cannot change it: delete the stream when it is empty and let the executor recreate it"
        : "restart `idem executor` (it updates the stream in place), or fix the config",
    });
  }
  for (const agent of Object.keys(config.agents)) {
    const name = agentConsumerName(agent);
    let consumer: FieldDifference[] | "missing";
    try {
      consumer = await inspectAgentConsumer(inspector, { queue: config.queue, nats }, agent);
    } catch (e) {
      findings.push({
        severity: "violation",
        key: `agents.${agent}`,
        finding: `cannot read consumer ${name}: ${(e as Error).message}`,
        fix: "start `idem executor`: it creates its consumers",
      });
      continue;
    }
    if (consumer === "missing") {
      findings.push({
        severity: "warning",
        key: `agents.${agent}`,
        finding: `consumer ${name} does not exist yet: no executor has run for ${agent}`,
        fix: "start `idem executor`: it creates its consumers",
      });
      continue;
    }
    for (const d of consumer) {
      findings.push({
        severity: "violation",
        key: `queue (consumer ${name})`,
        finding: shown(d),
        fix: "restart `idem executor` (it updates the consumer), or delete the consumer and let it recreate it",
      });
    }
  }
}
