import { agentConsumerName, expectedAgentConsumer, openJetStreamInspector } from "@idem/nats";
import { type Config, natsServers } from "@idem/schema";
import type { ConsumerBacklog, StreamBacklog } from "./list-jobs.js";

/**
 * The jobs stream's backlog as the server counts it, through the read-only inspector `idem doctor`
 * uses: for each agent (the config's, plus `agents`), its consumer's undelivered (`pending`) and
 * delivered-but-unacked (`ackPending`, with `redelivered`) messages. An agent without a consumer
 * (no executor ever ran it) is left out. Never throws: a server that cannot be read within
 * `timeoutMs` gives `error` and no consumers. Undefined without a `nats` section.
 */
export async function readStreamBacklog(
  config: Config,
  options: { agents?: readonly string[]; timeoutMs?: number } = {},
): Promise<StreamBacklog | undefined> {
  const nats = config.nats;
  if (!nats) return undefined;
  const backlog: StreamBacklog = { stream: nats.stream, consumers: [] };
  let inspector: Awaited<ReturnType<typeof openJetStreamInspector>>;
  try {
    inspector = await openJetStreamInspector(natsServers(nats), {
      timeoutMs: options.timeoutMs ?? 5_000,
      name: "idem-jobs",
    });
  } catch (e) {
    return { ...backlog, error: `cannot reach NATS: ${(e as Error).message}` };
  }
  try {
    const agents = new Set([...Object.keys(config.agents), ...(options.agents ?? [])]);
    for (const agent of [...agents].sort()) {
      const { stream, name } = expectedAgentConsumer({ queue: config.queue, nats }, agent);
      const counts = await inspector.consumerCounts(stream, name);
      if (counts === "missing") continue;
      const row: ConsumerBacklog = { agent, consumer: agentConsumerName(agent), ...counts };
      backlog.consumers.push(row);
    }
  } catch (e) {
    backlog.error = `cannot read the consumers of ${nats.stream}: ${(e as Error).message}`;
  } finally {
    await inspector.close().catch(() => {});
  }
  return backlog;
}
