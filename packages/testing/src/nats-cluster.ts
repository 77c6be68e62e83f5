import { freePort, type NatsServerHandle, startNatsServer } from "./nats-server.js";

/** One node of a throwaway JetStream cluster: a `NatsServerHandle` with its names and ports. */
export interface NatsClusterNode extends NatsServerHandle {
  /** Its `server_name` (`n1`, `n2`, ...), unique in the cluster as JetStream requires. */
  readonly name: string;
  /** Its HTTP monitoring port (`/jsz`), which the harness reads for leaders. */
  readonly monitorPort: number;
  /** The address it listens on. */
  readonly host: string;
}

/** A JetStream cluster of `size` nats-server processes on loopback, each killed by its PID only. */
export interface NatsClusterHandle extends AsyncDisposable {
  readonly nodes: readonly NatsClusterNode[];
  /** Every node's client URL, for `nats.servers` and a client's `servers`. */
  readonly urls: string[];
  /**
   * Resolves once JetStream's meta leader is elected and every running node knows it (after a
   * start, or a node's kill or restart).
   * @throws Error after `timeoutMs` (default 60 s), with each node's view.
   */
  waitForMetaLeader(timeoutMs?: number): Promise<string>;
  /**
   * Resolves with the name of the stream's leader once it has one and `replicas` current peers
   * (leader included) as seen by a running node.
   * @throws Error after `timeoutMs` (default 60 s).
   */
  waitForStreamLeader(stream: string, replicas: number, timeoutMs?: number): Promise<string>;
  /** Stops every node and removes their stores. Idempotent. */
  stop(): Promise<void>;
}

export interface StartNatsClusterOptions {
  /** Nodes; default 3 (the smallest cluster that keeps quorum when one dies). */
  size?: number;
  /** The cluster's name (`cluster.name`, which nats-server 2.9 requires for JetStream); default `idem`. */
  name?: string;
  /** The address every node listens on (clients, routes, monitoring); default 127.0.0.1. */
  host?: string;
}

interface Jsz {
  meta_cluster?: { leader?: string; cluster_size?: number };
  account_details?: {
    stream_detail?: {
      name: string;
      cluster?: { leader?: string; replicas?: { name: string; current: boolean }[] };
    }[];
  }[];
}

async function jsz(node: NatsClusterNode, query = ""): Promise<Jsz | undefined> {
  try {
    const res = await fetch(`http://${node.host}:${node.monitorPort}/jsz${query}`, {
      signal: AbortSignal.timeout(5_000),
    });
    return res.ok ? ((await res.json()) as Jsz) : undefined;
  } catch {
    return undefined; // a node being killed or restarted: ask the next one
  }
}

const alive = (n: NatsClusterNode): boolean => {
  try {
    process.kill(n.pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Starts a JetStream cluster on loopback: every node with a unique `server_name`, the cluster's
 * name, its own store in a temp dir, free client, route and monitoring ports and every route
 * listed, then waits for the meta leader. A node's `kill()`/`restart()` keep its ports and store,
 * so a restarted node rejoins as itself.
 * @throws Error when a node does not start or no meta leader is elected in 60 s.
 */
export async function startNatsCluster(
  options: StartNatsClusterOptions = {},
): Promise<NatsClusterHandle> {
  const size = options.size ?? 3;
  const clusterName = options.name ?? "idem";
  const host = options.host ?? "127.0.0.1";
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const monitorPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routes = routePorts.map((p) => `nats://${host}:${p}`).join(",");
  const nodes: NatsClusterNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    const started = await Promise.all(
      routePorts.map(async (routePort, i) => {
        const name = `n${i + 1}`;
        const server = await startNatsServer({
          host,
          args: [
            "--name",
            name,
            "--cluster_name",
            clusterName,
            "--cluster",
            `nats://${host}:${routePort}`,
            "--routes",
            routes,
            "-m",
            String(monitorPorts[i]),
          ],
        });
        // The handle's getters (pid) must stay live: extend the object, do not spread it.
        return Object.assign(server, { name, host, monitorPort: monitorPorts[i] as number });
      }),
    );
    nodes.push(...started);
  } catch (e) {
    await stop();
    throw e;
  }

  const waitForMetaLeader = async (timeoutMs = 60_000): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    let views: string[] = [];
    while (Date.now() < deadline) {
      const running = nodes.filter(alive);
      const leaders = await Promise.all(running.map(async (n) => (await jsz(n))?.meta_cluster));
      views = leaders.map((m, i) => `${running[i]?.name}: ${m?.leader ?? "no leader"}`);
      const first = leaders[0]?.leader;
      if (first && leaders.every((m) => m?.leader === first)) return first;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no JetStream meta leader within ${timeoutMs} ms (${views.join(", ")})`);
  };

  const waitForStreamLeader = async (
    stream: string,
    replicas: number,
    timeoutMs = 60_000,
  ): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      for (const n of nodes.filter(alive)) {
        const detail = (await jsz(n, "?streams=true"))?.account_details
          ?.flatMap((a) => a.stream_detail ?? [])
          .find((s) => s.name === stream);
        const leader = detail?.cluster?.leader;
        const current = (detail?.cluster?.replicas ?? []).filter((r) => r.current).length;
        if (leader && current + 1 >= replicas) return leader;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(
      `stream ${stream} has no leader with ${replicas} current peers in ${timeoutMs} ms`,
    );
  };

  try {
    await waitForMetaLeader();
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    nodes,
    urls: nodes.map((n) => n.url),
    waitForMetaLeader,
    waitForStreamLeader,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
