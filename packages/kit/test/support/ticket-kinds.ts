// Kinds of the ticket stand-in for the tester's own tests: one that keeps the contract, and the
// ways an author breaks it without noticing.
import { z } from "zod";
import { absent, defineEffectKind, fail, present } from "../../src/index.js";
import type { Ticket } from "./ticket-stand-in.js";

export type Variant =
  | "correct"
  | "gap"
  | "gap-closed"
  | "unkeyed-first-write"
  | "probe-always-absent"
  | "probe-always-present"
  | "plain-throw";

const Spec = z.strictObject({ kind: z.literal("test.ticket"), title: z.string().min(1).max(100) });
type Spec = z.infer<typeof Spec>;
const Options = z.strictObject({ baseUrl: z.string() });
interface Client {
  baseUrl: string;
  fetch: typeof fetch;
  fault(point: string): void;
}

async function call(c: Client, method: string, path: string, body: unknown, plain: boolean) {
  let res: Response;
  try {
    res = await c.fetch(`${c.baseUrl}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    if (plain) throw e;
    throw fail.transient(`${method} ${path} failed`, { cause: e });
  }
  if (!res.ok) throw fail.transient(`${method} ${path} answered ${res.status}`);
  return res.json();
}

/** The kind `test.ticket` as `variant` writes it: a ticket, labelled `triaged` for the gap variants. */
export function ticketKind(variant: Variant) {
  const labelled = variant === "gap" || variant === "gap-closed";
  const plain = variant === "plain-throw";
  const find = async (c: Client, key: string): Promise<Ticket | undefined> =>
    (
      (await call(
        c,
        "GET",
        `/tickets?externalId=${encodeURIComponent(key)}`,
        undefined,
        plain,
      )) as Ticket[]
    )[0];
  const probe = async (_spec: Spec, { resource, key }: { resource: Client; key: string }) => {
    if (variant === "probe-always-absent") return absent();
    if (variant === "probe-always-present") return present();
    const t = await find(resource, key);
    if (t === undefined) return absent();
    if (variant === "gap-closed" && !t.labels.includes("triaged")) return absent({ id: t.id });
    return present({ id: t.id });
  };
  return defineEffectKind({
    name: "test.ticket",
    description: "Opens a ticket at the stand-in.",
    guarantee: "exactly-once-in-effect",
    spec: Spec,
    options: Options,
    open: (ctx): Client => ({
      baseUrl: ctx.options.baseUrl,
      fetch: ctx.fetch,
      fault: (p) => ctx.fault(p),
    }),
    probe,
    async apply(spec, c) {
      const probed = c.probed ?? (await probe(spec, c));
      if (probed.status === "present") return probed.detail;
      let id = probed.status === "absent" ? (probed.detail.id as string | undefined) : undefined;
      if (id === undefined) {
        const unkeyed = variant === "unkeyed-first-write";
        const t = (await call(
          c.resource,
          "POST",
          "/tickets",
          {
            title: spec.title,
            ...(unkeyed ? {} : { externalId: c.key }),
          },
          plain,
        )) as Ticket;
        id = t.id;
        if (unkeyed)
          await call(c.resource, "PATCH", `/tickets/${id}`, { externalId: c.key }, plain);
      }
      if (labelled)
        await call(c.resource, "POST", `/tickets/${id}/labels`, { label: "triaged" }, plain);
      c.resource.fault("test.after-create");
      return { id };
    },
    scan: {
      target: (_spec, ctx) => ctx.options.baseUrl,
      async keys(_spec, { resource }) {
        const all = (await call(resource, "GET", "/tickets", undefined, false)) as Ticket[];
        const keys = new Map<string, string[]>();
        for (const t of all)
          if (t.externalId !== null)
            keys.set(t.externalId, [...(keys.get(t.externalId) ?? []), t.id]);
        return keys;
      },
    },
    samples: {
      valid: (i) => ({ kind: "test.ticket" as const, title: `ticket ${i}` }),
      invalid: [{ spec: { kind: "test.ticket", title: "" }, field: "title" }],
    },
    faultPoints: ["test.after-create"],
  });
}
