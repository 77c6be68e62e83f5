import {
  agentConsumerName,
  type FieldDifference,
  inspectAgentConsumer,
  inspectJobsStream,
  inspectPublishStream,
  type JetStreamInspector,
  openJetStreamInspector,
} from "@idem/nats";
import { type Config, type NatsConfig, natsServers } from "@idem/schema";
import type { Finding } from "./finding.js";

/**
 * Reads the jobs stream, each agent's consumer and every publish target's stream back from the
 * server and compares them with what @idem/nats provisions for this config (`expectedJobsStream`,
 * `expectedAgentConsumer`, `expectedPublishStream`). Read-only: it never creates or updates
 * anything (the executor and `idem enqueue` do that). A stream or consumer not created yet is a
 * warning; an unreachable server, an unreadable or differing stream or consumer is a violation.
 * Never throws: every failure is a finding. One connection per server, each bounded by `timeoutMs`.
 */
export async function checkNats(
  config: Config,
  options: { timeoutMs: number },
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const inspectors = new Map<string, JetStreamInspector | Error>();
  const inspector = async (url: string): Promise<JetStreamInspector | Error> => {
    let c = inspectors.get(url);
    if (!c) {
      c = await openJetStreamInspector(url, {
        timeoutMs: options.timeoutMs,
        name: "idem-doctor",
      }).catch((e: unknown) => e as Error);
      inspectors.set(url, c);
    }
    return c;
  };
  try {
    const nats = config.nats;
    const servers = nats && natsServers(nats);
    if (nats && servers) {
      const c = await inspector(servers);
      if (c instanceof Error) {
        findings.push({
          severity: "violation",
          key: nats.servers.length > 0 ? "nats.servers" : "nats.url",
          finding: `cannot reach NATS at ${servers}: ${c.message}`,
          fix: "start nats-server with JetStream (-js), or fix nats.url / NATS_URL; enqueue and the executor wait for it (docs/runbook.md, NATS outage)",
        });
      } else {
        await checkJobsStream(c, config, nats, findings);
      }
    }
    for (const [alias, t] of Object.entries(config.publish)) {
      const url = t.url ?? servers;
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
      const c = await inspector(url);
      if (c instanceof Error) {
        if (url !== servers) {
          findings.push({
            severity: "violation",
            key: `${key}.url`,
            finding: `cannot reach NATS at ${url}: ${c.message}`,
            fix: "start that server or fix the url; its publishes fail and retry until it answers",
          });
        }
        continue;
      }
      const fix = `create it: nats stream add ${t.stream} --subjects '${t.subjectPrefix}.>'`;
      try {
        const state = await inspectPublishStream(c, t);
        if (state === "missing") {
          // The next nats.publish to the target makes it (capturing the prefix, 1 h duplicate
          // window): a warning, as for the jobs stream an executor makes.
          findings.push({
            severity: "warning",
            key: `${key}.stream`,
            finding: `stream ${t.stream} does not exist on ${url} (a new server, or a lost store): the next nats.publish to ${key} makes it`,
            fix: `nothing, or make it as you want it first (${fix.replace("create it: ", "")} --dupe-window 1h); anything it held before is gone`,
          });
        } else if (!state.captures) {
          findings.push({
            severity: "violation",
            key: `${key}.stream`,
            finding: `stream ${t.stream} does not capture ${t.subjectPrefix}.> (it has ${JSON.stringify(state.subjects)})`,
            fix: `add ${t.subjectPrefix}.> to the stream's subjects or fix ${key}.subjectPrefix`,
          });
        } else if (nats && url === servers && state.replicas < nats.replicas) {
          // On the cluster of the nats section, a target's stream keeps as many copies as the
          // jobs stream: fewer, and the loss of a node can lose what idem published.
          findings.push({
            severity: "violation",
            key: `${key}.stream`,
            finding: `stream ${t.stream} has ${state.replicas} replica(s), fewer than nats.replicas ${nats.replicas}`,
            fix: `nats stream edit ${t.stream} --replicas ${nats.replicas}`,
          });
        }
      } catch (e) {
        findings.push({
          severity: "violation",
          key: `${key}.stream`,
          finding: `cannot read stream ${t.stream}: ${(e as Error).message}`,
          fix,
        });
      }
    }
  } finally {
    for (const c of inspectors.values()) if (!(c instanceof Error)) await c.close();
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
