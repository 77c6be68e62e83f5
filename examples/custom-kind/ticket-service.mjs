#!/usr/bin/env node
// A small ticket service, the kind of target an operator's own effect kind talks to: create a
// ticket, search tickets by their external ID, list them. Like most real services it has no
// idempotency of its own: every POST makes a new ticket. The kind in kinds/ticket.mjs makes
// creating one exactly once in effect by giving each ticket the effect key as its external ID and
// searching for it before it creates one.
//
//   node ticket-service.mjs [--port 4000] [--data tickets.json]
//
// With ACME_TOKEN set, every request must carry `Authorization: Bearer $ACME_TOKEN`. Prints one
// line of JSON with its URL when it listens; keeps the tickets in memory, and in --data if given.
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { port: { type: "string", default: "4000" }, data: { type: "string" } },
});
const token = process.env.ACME_TOKEN;
const tickets = values.data && existsSync(values.data) ? JSON.parse(readFileSync(values.data)) : [];

function save() {
  if (!values.data) return;
  writeFileSync(`${values.data}.tmp`, JSON.stringify(tickets));
  renameSync(`${values.data}.tmp`, values.data);
}

function answer(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error("body too large");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const server = createServer(async (req, res) => {
  if (token && req.headers.authorization !== `Bearer ${token}`)
    return answer(res, 401, { error: "unauthorized" });
  const url = new URL(req.url ?? "/", "http://localhost");
  try {
    if (req.method === "POST" && url.pathname === "/tickets") {
      const { queue, title, body, externalId } = await readJson(req);
      if (typeof queue !== "string" || typeof title !== "string" || title.trim() === "")
        return answer(res, 400, { error: "queue and title are required" });
      const ticket = {
        id: `T-${randomUUID().slice(0, 8)}`,
        queue,
        title,
        body: typeof body === "string" ? body : "",
        externalId: typeof externalId === "string" ? externalId : null,
        createdAt: new Date().toISOString(),
      };
      tickets.push(ticket);
      save();
      return answer(res, 201, ticket);
    }
    if (req.method === "GET" && url.pathname === "/tickets") {
      // ?externalId=<id>: the tickets carrying it (search); without it, every ticket (a listing).
      const externalId = url.searchParams.get("externalId");
      const found =
        externalId === null ? tickets : tickets.filter((t) => t.externalId === externalId);
      return answer(res, 200, { tickets: found });
    }
    const one = /^\/tickets\/([A-Za-z0-9-]+)$/.exec(url.pathname);
    if (req.method === "GET" && one) {
      const ticket = tickets.find((t) => t.id === one[1]);
      return ticket ? answer(res, 200, ticket) : answer(res, 404, { error: "no such ticket" });
    }
    return answer(res, 404, { error: "not found" });
  } catch (e) {
    return answer(res, 400, { error: e instanceof Error ? e.message : "bad request" });
  }
});

server.listen(Number(values.port), "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
