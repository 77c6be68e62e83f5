// http.request on a target with a lookup (docs/kinds/http.md): the request carries the key where a
// ticket service keeps an external id, and the probe finds it by the service's search, so a create
// whose answer was lost is found instead of made twice. Against a local service of the test's own.
import {
  DEFAULT_KIND_LIMITS,
  type DoctorContext,
  IdemError,
  openKind,
  safeParseKindOptions,
  systemClock,
} from "@idem/kit";
import { describe, expect, it } from "vitest";
import { httpRequestKind } from "../../src/kinds/http-request/http-request-kind.js";
import { type HttpSection, HttpSectionSchema } from "../../src/kinds/http-request/http-targets.js";
import { expectIdemError, fieldOf, interpret, rejection } from "./kind-calls.js";
import { startTicketService, type TicketService } from "./ticket-service.js";

const SEARCH = {
  path: "/tickets/search?external_id={key}",
  match: "/tickets",
  field: "/external_id",
};

function kindOn(
  svc: TicketService,
  target: Record<string, unknown>,
  env: Record<string, string> = {},
) {
  return openKind(httpRequestKind, {
    options: { targets: { tickets: { baseUrl: `${svc.url}/api`, timeoutMs: 30_000, ...target } } },
    optionsAt: "http",
    env,
  });
}

const create = (title: string, extra: Record<string, unknown> = {}) => ({
  kind: "http.request",
  target: "tickets",
  method: "POST",
  path: "/tickets",
  body: { ticket: { title } },
  ...extra,
});

describe("http.request with a lookup", () => {
  it("sets the key in the body, is absent before and present after, and a second run posts nothing", async () => {
    await using svc = await startTicketService();
    svc.token = "s3cret";
    const k = kindOn(
      svc,
      {
        lookup: { ...SEARCH, keyField: "/ticket/external_id" },
        headersEnv: { Authorization: "TICKETS_AUTH" },
      },
      { TICKETS_AUTH: "Bearer s3cret" },
    );
    const s = k.check(create("Printer on fire"));
    expect(k.kind.probeable?.(s, k.context)).toBe(true);
    expect((await k.probe(s, "job.1/0")).status).toBe("absent");
    expect((await interpret(k, s, "job.1/0", Date.now())).outcome).toBe("applied");
    expect(svc.tickets).toEqual([{ id: 1, title: "Printer on fire", external_id: "job.1/0" }]);
    expect(await k.probe(s, "job.1/0")).toEqual({
      status: "present",
      detail: { lookup: "found", index: 0 },
    });
    expect((await interpret(k, s, "job.1/0", Date.now())).outcome).toBe("present");
    // apply without a probe asks the target first
    expect(await k.apply(s, "job.1/0")).toMatchObject({ lookup: "found" });
    expect(svc.creates()).toBe(1);
    // the key travels percent-encoded in the query, and every request carries the credential
    expect(svc.requests.find((r) => r.method === "GET")?.url).toBe(
      "/api/tickets/search?external_id=job.1%2F0",
    );
    expect(new Set(svc.requests.map((r) => r.auth))).toEqual(new Set(["Bearer s3cret"]));
    await k.close();
  });

  it("does not post again after a crash between the create and the record", async () => {
    await using svc = await startTicketService();
    const target = { lookup: { ...SEARCH, keyField: "/ticket/external_id" } };
    const k = kindOn(svc, target);
    const s = k.check(create("Disk full"));
    svc.dropAfterCreate();
    // the create took, its answer was lost: not knowable from the request alone
    expectIdemError(await rejection(interpret(k, s, "job-2/0", Date.now())), "OUTCOME_UNKNOWN");
    await k.close();
    // the next run (another process: a fresh kind) asks the target and finds it
    const again = kindOn(svc, target);
    expect(
      (await interpret(again, again.check(create("Disk full")), "job-2/0", Date.now())).outcome,
    ).toBe("present");
    expect(svc.creates()).toBe(1);
    expect(svc.tickets).toHaveLength(1);
    await again.close();
  });

  it("counts only the key itself, and refuses a search that answers other tickets rather than answer absent", async () => {
    await using svc = await startTicketService();
    const k = kindOn(svc, { lookup: { ...SEARCH, keyField: "/ticket/external_id" } });
    await interpret(k, k.check(create("one")), "job-3/0", Date.now());
    expect((await k.probe(k.check(create("two")), "job-3/1")).status).toBe("absent");
    svc.fuzzy = true;
    // the filter ignored: the answer carries job-3/0 only, which says nothing of job-3/1
    const e = await rejection(k.probe(k.check(create("two")), "job-3/1"));
    expectIdemError(e, "INVALID_CONFIG");
    expect((e as { details?: { key?: string } }).details?.key).toBe(
      "http.targets.tickets.lookup.path",
    );
    expect((await k.probe(k.check(create("one")), "job-3/0")).status).toBe("present");
    expect(svc.creates()).toBe(1);
    await k.close();
  });

  it("writes the key only on a create: a PATCH keeps the external id, and is not probed by the lookup", async () => {
    await using svc = await startTicketService();
    const k = kindOn(svc, { lookup: { ...SEARCH, keyField: "/ticket/external_id" } });
    const s = k.check(create("one"));
    await interpret(k, s, "job-7/0", Date.now());
    const patch = k.check(
      create("renamed", { method: "PATCH", path: "/tickets/1", body: { ticket: { title: "x" } } }),
    );
    expect(k.kind.probeable?.(patch, k.context)).toBe(false);
    await k.apply(patch, "job-8/0");
    const sent = svc.requests.at(-1);
    expect(sent?.method).toBe("PATCH");
    expect(sent?.body).toBe('{"ticket":{"title":"x"}}');
    // the create is still found by its own key
    expect((await k.probe(s, "job-7/0")).status).toBe("present");
    await k.close();
  });

  it("refuses an answer not shaped as the config says, rather than answer absent", async () => {
    await using svc = await startTicketService();
    const s = create("x");
    const wrong = kindOn(svc, {
      lookup: { ...SEARCH, match: "/results", keyField: "/ticket/external_id" },
    });
    const e = await rejection(wrong.probe(wrong.check(s), "job-4/0"));
    expectIdemError(e, "INVALID_CONFIG");
    expect((e as { details?: { key?: string } }).details?.key).toBe(
      "http.targets.tickets.lookup.match",
    );
    svc.html = true;
    const k = kindOn(svc, { lookup: { ...SEARCH, keyField: "/ticket/external_id" } });
    expectIdemError(await rejection(k.probe(k.check(s), "job-4/0")), "INVALID_CONFIG");
    // a 404 from a search means a wrong path, never absent
    const lost = kindOn(svc, {
      lookup: { ...SEARCH, path: "/tickets/find?id={key}", keyField: "/ticket/external_id" },
    });
    const notFound = await rejection(lost.probe(lost.check(s), "job-4/0"));
    expectIdemError(notFound, "INVALID_CONFIG");
    expect((notFound as { details?: { key?: string } }).details?.key).toBe(
      "http.targets.tickets.lookup.path",
    );
    expect(svc.creates()).toBe(0);
  });

  it("carries the key in a header and looks it up in a path segment (404 absent)", async () => {
    await using svc = await startTicketService();
    const k = kindOn(svc, {
      lookup: {
        path: "/tickets/external/{key}",
        absentOn404: true,
        match: "/ticket/external_id",
        keyHeader: "X-External-Id",
      },
    });
    const s = k.check(create("by header"));
    expect(await k.probe(s, "job-5:a/3")).toEqual({
      status: "absent",
      detail: { lookup: "not-found" },
    });
    expect((await interpret(k, s, "job-5:a/3", Date.now())).outcome).toBe("applied");
    expect(svc.tickets[0]?.external_id).toBe("job-5:a/3");
    expect((await k.probe(s, "job-5:a/3")).status).toBe("present");
    expect(svc.requests.at(-1)?.url).toBe("/api/tickets/external/job-5%3Aa%2F3");
  });

  it("refuses before record what would keep the key from the target, naming the field", async () => {
    await using svc = await startTicketService();
    const k = kindOn(svc, {
      lookup: { ...SEARCH, keyField: "/ticket/external_id", keyHeader: "X-External-Id" },
    });
    const field = (spec: unknown) => {
      try {
        k.check(spec);
      } catch (e) {
        return fieldOf(e);
      }
      return undefined;
    };
    expect(field(create("ok"))).toBeUndefined();
    expect(field(create("ok", { body: undefined }))).toBeUndefined();
    expect(field(create("x", { method: "GET", body: undefined }))).toBeUndefined();
    expect(field(create("x", { method: "PUT", body: [1] }))).toBeUndefined();
    expect(
      field(create("x", { body: { ticket: { title: "x", external_id: "other-job/0" } } })),
    ).toBe("body");
    expect(field(create("x", { body: { ticket: ["x"] } }))).toBe("body");
    expect(field(create("x", { body: [1] }))).toBe("body");
    expect(field(create("x", { headers: { "x-external-id": "other-job/0" } }))).toBe(
      "headers.x-external-id",
    );
  });

  it("is refused in the config with both probeUrl and lookup, a lookup path without {key}, or a lookup that never sends the key", () => {
    const issues = (lookup: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const r = safeParseKindOptions(
        httpRequestKind,
        { targets: { t: { baseUrl: "http://127.0.0.1:1", lookup, ...extra } } },
        { at: "http", dir: "/tmp" },
      );
      return r.ok ? [] : r.issues.map((i) => i.key);
    };
    expect(issues(SEARCH)).toEqual(["http.targets.t.lookup.keyField"]);
    expect(issues({ ...SEARCH, keyHeader: "X-External-Id" })).toEqual([]);
    const sends = { ...SEARCH, keyField: "/ticket/external_id" };
    expect(issues(sends, { probeUrl: "/status/{key}" })).toEqual(["http.targets.t.lookup"]);
    expect(issues({ ...sends, path: "/tickets/search" })).toEqual(["http.targets.t.lookup.path"]);
    expect(issues({ ...sends, path: "/../admin?q={key}" })).toEqual(["http.targets.t.lookup.path"]);
    expect(issues({ ...sends, match: "tickets" })).toEqual(["http.targets.t.lookup.match"]);
    expect(issues({ ...sends, keyHeader: "Idempotency-Key" })).toEqual([
      "http.targets.t.lookup.keyHeader",
    ]);
  });
});

describe("http.request with a probeUrl holding {key}", () => {
  it("probes a path under the base URL with the key percent-encoded", async () => {
    await using svc = await startTicketService();
    const k = kindOn(svc, { probeUrl: "/tickets/external/{key}", lookup: undefined });
    const s = k.check(create("x", { headers: { "X-External-Id": "job-6/0" } }));
    expect((await k.probe(s, "job-6/0")).status).toBe("absent");
    await k.apply(s, "job-6/0");
    expect((await k.probe(s, "job-6/0")).status).toBe("present");
  });
});

describe("idem doctor --network on a target with a lookup", () => {
  const doctor = (svc: TicketService, env: Record<string, string> = {}) => {
    const options = HttpSectionSchema.parse({
      targets: {
        tickets: {
          baseUrl: `${svc.url}/api`,
          lookup: { ...SEARCH, keyField: "/ticket/external_id" },
          headersEnv: { Authorization: "TICKETS_AUTH" },
        },
      },
    });
    const ctx: DoctorContext<HttpSection> = {
      options,
      limits: DEFAULT_KIND_LIMITS,
      checking: () => {},
      clock: systemClock,
      fetch: globalThis.fetch,
      timeoutMs: 30_000,
      network: true,
      env(v) {
        const value = env[v];
        if (value === undefined) throw new IdemError("INVALID_CONFIG", `${v} is not set`);
        return value;
      },
    };
    return (httpRequestKind.doctor as NonNullable<typeof httpRequestKind.doctor>)(ctx);
  };

  it("passes a lookup that filters, and refuses one whose service answers other keys' items", async () => {
    await using svc = await startTicketService();
    svc.token = "s3cret";
    const env = { TICKETS_AUTH: "Bearer s3cret" };
    const k = kindOn(
      svc,
      {
        lookup: { ...SEARCH, keyField: "/ticket/external_id" },
        headersEnv: { Authorization: "TICKETS_AUTH" },
      },
      env,
    );
    await interpret(k, k.check(create("one")), "job-9/0", Date.now());
    expect(await doctor(svc, env)).toEqual([]);
    svc.fuzzy = true;
    const findings = await doctor(svc, env);
    expect(findings.map((f) => [f.severity, f.key])).toEqual([
      ["violation", "http.targets.tickets.lookup.path"],
    ]);
    expect(svc.creates()).toBe(1);
    await k.close();
  });
});
