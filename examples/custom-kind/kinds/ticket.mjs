// acme.ticket: opens a ticket at the Acme ticket service (../ticket-service.mjs), exactly once in
// effect. The service makes a new ticket on every POST, so the kind gives each ticket the effect
// key as its external ID, and asks "is there a ticket with this external ID?" before it creates
// one: after a crash at any point, idem's probe finds the ticket and never opens a second.
// docs/effect-kinds.md walks through it part by part.
import { absent, conflict, defineEffectKind, fail, present, retryAfterMs } from "@idem/kit";
import { z } from "zod";

/** `kinds["acme.ticket"].options` in the config: where the service is, never a credential. */
const TicketOptions = z.strictObject({
  baseUrl: z.url({ protocol: /^https?$/ }),
  /** The environment variable holding the service's token (the token itself is never in config). */
  tokenEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/),
  /** The queues agents may open tickets in. */
  queues: z
    .array(z.string().regex(/^[a-z][a-z0-9-]{0,63}$/))
    .min(1)
    .default(["support"]),
  timeoutMs: z.number().int().min(100).max(120_000).default(10_000),
});

/** What an agent asks for. */
const TicketSpec = z.strictObject({
  kind: z.literal("acme.ticket"),
  queue: z.string().min(1).max(64),
  title: z.string().min(1).max(200),
  body: z.string().max(10_000).default(""),
});

/** One call to the service: its JSON, or the failure idem acts on. */
async function call(service, method, path, body) {
  let res;
  try {
    res = await service.fetch(`${service.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${service.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(service.timeoutMs),
    });
  } catch (e) {
    // Sent or not, the probe can tell: a transient failure, retried after a probe.
    throw fail.transient(`${method} ${path}: ${e instanceof Error ? e.message : e}`, { cause: e });
  }
  if (res.status === 429 || res.status >= 500) {
    await res.body?.cancel();
    throw fail.transient(`${method} ${path}: HTTP ${res.status}`, {
      retryAfterMs: retryAfterMs(res.headers),
    });
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    throw fail.missing(
      `${method} ${path}: HTTP ${res.status}, check the token in $${service.tokenEnv}`,
    );
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw fail.conflict(`${method} ${path}: HTTP ${res.status}`);
  }
  return res.json();
}

/** The tickets carrying `key` as their external ID. */
async function search(service, key) {
  const { tickets } = await call(service, "GET", `/tickets?externalId=${encodeURIComponent(key)}`);
  return Array.isArray(tickets) ? tickets : [];
}

/** Present with the ticket's id when a ticket carries the key. Never changes the service. */
async function probe(spec, { resource, key }) {
  const [ticket] = await search(resource, key);
  if (ticket === undefined) return absent();
  if (ticket.queue !== spec.queue)
    return conflict(`ticket ${ticket.id} carries this key in queue ${ticket.queue}`);
  return present({ id: ticket.id });
}

export default defineEffectKind({
  name: "acme.ticket",
  description:
    "Opens a ticket in a queue of the Acme ticket service, found again by the effect key as its external ID.",
  guarantee: "exactly-once-in-effect",
  spec: TicketSpec,
  options: TicketOptions,
  check(spec, ctx) {
    if (!ctx.options.queues.includes(spec.queue))
      ctx.issue("queue", `is not one of the configured queues (${ctx.options.queues.join(", ")})`);
    if (/[\r\n]/.test(spec.title)) ctx.issue("title", "must be one line");
  },
  aliases: (spec) => [{ type: "target", name: spec.queue }],
  knownAliases: (ctx) => ctx.options.queues.map((name) => ({ type: "target", name })),
  describe: (spec) => `${spec.queue}: ${JSON.stringify(spec.title)}`,
  open: (ctx) => ({
    baseUrl: ctx.options.baseUrl.replace(/\/+$/, ""),
    token: ctx.env(ctx.options.tokenEnv),
    tokenEnv: ctx.options.tokenEnv,
    timeoutMs: ctx.options.timeoutMs,
    fetch: ctx.fetch,
    fault: (point) => ctx.fault(point),
  }),
  probe,
  async apply(spec, c) {
    // After a crash idem probes first and passes what it found; called without, it asks itself.
    const probed = c.probed ?? (await probe(spec, c));
    if (probed.status === "present") return probed.detail;
    if (probed.status === "conflict") throw fail.conflict(probed.reason);
    const ticket = await call(c.resource, "POST", "/tickets", {
      queue: spec.queue,
      title: spec.title,
      body: spec.body,
      externalId: c.key,
    });
    // The ticket exists, nothing is recorded yet: the drill kills the interpreter here too.
    c.resource.fault("acme.after-create");
    return { id: ticket.id };
  },
  scan: {
    target: (_spec, ctx) => ctx.options.baseUrl,
    async keys(_spec, { resource }) {
      const { tickets } = await call(resource, "GET", "/tickets");
      const keys = new Map();
      for (const t of Array.isArray(tickets) ? tickets : []) {
        if (typeof t.externalId !== "string") continue;
        keys.set(t.externalId, [...(keys.get(t.externalId) ?? []), t.id]);
      }
      return keys;
    },
    configured: (ctx) => [
      { kind: "acme.ticket", queue: ctx.options.queues[0], title: "-", body: "" },
    ],
  },
  faultPoints: ["acme.after-create"],
  samples: {
    valid: (i, ctx) => ({
      kind: "acme.ticket",
      queue: ctx.options.queues[0],
      title: `idem drill ${i}`,
      body: "Opened by idem's conformance drill.",
    }),
    invalid: [
      { spec: { kind: "acme.ticket", queue: "support", title: "" }, field: "title" },
      { spec: { kind: "acme.ticket", queue: "support", title: "two\nlines" }, field: "title" },
      { spec: { kind: "acme.ticket", queue: "no-such-queue", title: "t" }, field: "queue" },
    ],
  },
});
