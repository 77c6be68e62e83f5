import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A webhook receiver on loopback with two targets (`/hooks/...`, `/audit/...`): it keeps what it
 * received by Idempotency-Key, answers its probe URL (`/<target>/probe/<key>`: 200 kept, 404 not),
 * and counts every POST and every probe by key. `lose()` forgets what it kept (a receiver that
 * answered 200 and lost the data), the counts stay.
 */
export interface Receiver {
  port: number;
  /** `hooks:<key>` for each key kept. */
  kept(): string[];
  /** POSTs received, by `target:key`. */
  posts: Map<string, number>;
  /** Probes received, by `target:key`. */
  probes: Map<string, number>;
  lose(): void;
  /** `http.targets` for the config: hooks and audit, both probeable. */
  targets(): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const kept = new Set<string>();
  const posts = new Map<string, number>();
  const probes = new Map<string, number>();
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const server: Server = createServer((req, res) => {
    const [, target, what, key] = (req.url ?? "").split("/");
    if (req.method === "GET" && what === "probe" && key) {
      const id = `${target}:${decodeURIComponent(key)}`;
      bump(probes, id);
      res.writeHead(kept.has(id) ? 200 : 404).end();
      return;
    }
    const id = `${target}:${String(req.headers["idempotency-key"])}`;
    req.resume();
    req.on("end", () => {
      bump(posts, id);
      kept.add(id);
      res.writeHead(200).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    kept: () => [...kept].sort(),
    posts,
    probes,
    lose: () => kept.clear(),
    targets: () => {
      const t = (name: string) => ({
        baseUrl: `http://127.0.0.1:${port}/${name}/`,
        probeUrl: `http://127.0.0.1:${port}/${name}/probe/{key}`,
        timeoutMs: 30_000,
      });
      return { hooks: t("hooks"), audit: t("audit") };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
