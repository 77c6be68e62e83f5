// A ticket service in process, like examples/custom-kind/ticket-service.mjs: every POST /tickets
// makes a new ticket (no idempotency of its own), a ticket carries the caller's `externalId` and
// labels, GET /tickets lists them (by externalId when asked).
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Ticket {
  id: string;
  title: string;
  externalId: string | null;
  labels: string[];
}

export interface TicketStandIn extends AsyncDisposable {
  url: string;
  tickets: Ticket[];
}

export async function startTicketStandIn(): Promise<TicketStandIn> {
  const tickets: Ticket[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    const answer = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const labels = /^\/tickets\/([^/]+)\/labels$/.exec(url.pathname);
    const one = /^\/tickets\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && url.pathname === "/tickets") {
      const ext = url.searchParams.get("externalId");
      return answer(200, ext === null ? tickets : tickets.filter((t) => t.externalId === ext));
    }
    if (req.method === "POST" && url.pathname === "/tickets") {
      const t: Ticket = {
        id: `T-${tickets.length + 1}`,
        title: String(body.title),
        externalId: typeof body.externalId === "string" ? body.externalId : null,
        labels: [],
      };
      tickets.push(t);
      return answer(201, t);
    }
    const t = tickets.find((x) => x.id === (labels?.[1] ?? one?.[1]));
    if (!t) return answer(404, { error: "no such ticket" });
    if (req.method === "POST" && labels) {
      t.labels.push(String(body.label));
      return answer(200, t);
    }
    if (req.method === "PATCH" && one) {
      t.externalId = String(body.externalId);
      return answer(200, t);
    }
    return answer(405, { error: "method not allowed" });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tickets,
    async [Symbol.asyncDispose]() {
      server.close();
      server.closeAllConnections();
      await once(server, "close");
    },
  };
}
