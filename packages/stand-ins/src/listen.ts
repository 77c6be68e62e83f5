import type { Server } from "node:http";

/**
 * Listens on 127.0.0.1 at `port` (0: a port the system picks, free by construction); answers the
 * port bound. @throws Error EADDRINUSE when `port` is taken
 */
export function listenOnLoopback(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}
