// A small ticket service of the test's own on a free loopback port, as APIs with a search by
// external id are (Zendesk's tickets, most CRMs): POST creates a ticket (it does NOT dedup), GET
// searches by external_id. It can drop the connection right after a create (the crash window that
// makes other tools duplicate), answer its search fuzzily (every ticket), and require a token.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Ticket {
  id: number;
  title: string;
  external_id: string | null;
}

export interface TicketService extends AsyncDisposable {
  readonly url: string;
  readonly tickets: Ticket[];
  /** Every request, in order: method, URL as sent, the authorization header, the body. */
  readonly requests: { method: string; url: string; auth: string | undefined; body: string }[];
  /** The next create is stored, then its connection destroyed before any answer. */
  dropAfterCreate(): void;
  /** Searches answer every ticket, whatever external_id asks. */
  fuzzy: boolean;
  /** Searches answer 200 with HTML (a proxy's error page). */
  html: boolean;
  /** The token every request must carry (`Authorization: Bearer <token>`), or none. */
  token: string | undefined;
  /** How many creates (POSTs that stored a ticket). */
  creates(): number;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Starts the service; `await using` stops it. */
export async function startTicketService(): Promise<TicketService> {
  const tickets: Ticket[] = [];
  const requests: TicketService["requests"] = [];
  let drop = false;
  let created = 0;
  const state = { fuzzy: false, html: false, token: undefined as string | undefined };
  const handle = (req: IncomingMessage, body: string, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    requests.push({
      method: req.method ?? "",
      url: req.url ?? "",
      auth: req.headers.authorization,
      body,
    });
    if (state.token !== undefined && req.headers.authorization !== `Bearer ${state.token}`)
      return json(res, 401, { error: "unauthorized" });
    if (req.method === "POST" && url.pathname === "/api/tickets") {
      const b = JSON.parse(body || "{}") as { ticket?: { title?: string; external_id?: string } };
      const header = req.headers["x-external-id"];
      const ticket = {
        id: tickets.length + 1,
        title: b.ticket?.title ?? "",
        external_id: b.ticket?.external_id ?? (typeof header === "string" ? header : null),
      };
      tickets.push(ticket);
      created += 1;
      if (drop) {
        drop = false;
        return req.socket.destroy();
      }
      return json(res, 201, { ticket });
    }
    if (req.method === "GET" && url.pathname === "/api/tickets/search") {
      if (state.html) {
        res.writeHead(200, { "content-type": "text/html" });
        return res.end("<html>bad gateway</html>");
      }
      const id = url.searchParams.get("external_id");
      return json(res, 200, {
        tickets: state.fuzzy ? tickets : tickets.filter((t) => t.external_id === id),
        count: tickets.length,
      });
    }
    const byId = /^\/api\/tickets\/([0-9]+)$/.exec(url.pathname);
    if (req.method === "PATCH" && byId) {
      const t = tickets.find((x) => x.id === Number(byId[1]));
      if (!t) return json(res, 404, { error: "not found" });
      const b = JSON.parse(body || "{}") as { ticket?: Partial<Ticket> };
      Object.assign(t, b.ticket ?? {});
      return json(res, 200, { ticket: t });
    }
    const byExternal = /^\/api\/tickets\/external\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && byExternal) {
      const id = decodeURIComponent(byExternal[1] as string);
      const t = tickets.find((x) => x.external_id === id);
      return t ? json(res, 200, { ticket: t }) : json(res, 404, { error: "not found" });
    }
    json(res, 404, { error: "no such endpoint" });
  };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => handle(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    url,
    tickets,
    requests,
    dropAfterCreate: () => {
      drop = true;
    },
    creates: () => created,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  });
}
