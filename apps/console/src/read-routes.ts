import { buildAudit, isAuditClean, type JobView, showArchivedJob, showJob } from "@idem/core";
import { isIdemError, parseSince, RUN_STATES, type RunState } from "@idem/schema";
import type { Context, Hono } from "hono";
import { html } from "hono/html";
import { type ConsoleDeps, wantsJson } from "./deps.js";
import { page, wantsFragment } from "./layout.js";
import { auditBody, lastAudit, rememberAudit } from "./pages/audit.js";
import { outputBody } from "./pages/output.js";
import { type OutputsQuery, outputsBody } from "./pages/outputs.js";
import { overviewBody } from "./pages/overview.js";
import { listOutputsPage, type OutputsFilter } from "./views/list-outputs-page.js";

/** A request the console refuses, naming the field. */
export class BadRequest extends Error {
  override readonly name = "BadRequest";
}

/** A `since` field: a duration back from now or an ISO time, or a 400 naming the field. */
export function sinceField(value: string, field: string, now: number): number | undefined {
  if (value.trim() === "") return undefined;
  try {
    return parseSince(value.trim(), now);
  } catch (e) {
    throw new BadRequest(`${field}: ${(e as Error).message}`);
  }
}

/** A run state field, or a 400 naming the field. */
export function stateField(value: string, field: string): RunState | undefined {
  if (value === "") return undefined;
  if (!(RUN_STATES as readonly string[]).includes(value))
    throw new BadRequest(`${field}: "${value}" is not one of ${RUN_STATES.join(", ")}`);
  return value as RunState;
}

/** The read-only pages: overview, outputs, an output, audit. */
export function readRoutes(app: Hono, d: ConsoleDeps): void {
  app.get("/", async (c) => {
    const [overview, idle] = await Promise.all([
      wantsFragment(c) ? d.overview.recent() : d.overview.read(),
      d.interpreters.check(d.now()),
    ]);
    const audit = lastAudit(d.journal);
    if (wantsJson(c)) return c.json({ ...overview, audit: audit ?? null, idleInterpreters: idle });
    return page(c, d.shell(c), {
      title: "Overview",
      path: "/",
      live: d.liveMs,
      body: overviewBody(overview, audit, { background: d.audit, idle }),
    });
  });

  app.get("/outputs", async (c) => {
    const q: OutputsQuery = {
      agent: (c.req.query("agent") ?? "").trim(),
      state: c.req.query("state") ?? "",
      since: c.req.query("since") ?? "",
      limit: Math.min(500, Math.max(1, Number(c.req.query("limit") ?? 50) || 50)),
    };
    // Newest first, page after page back (`before`); `after` reads oldest first from a seq.
    const cursor = (name: "before" | "after") => {
      const v = c.req.query(name);
      if (v === undefined) return undefined;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0)
        throw new BadRequest(`${name}: a recording sequence number (0 or more)`);
      return n;
    };
    const after = cursor("after");
    const before = cursor("before");
    const filter: OutputsFilter = {
      ...(q.agent && { agent: q.agent }),
      ...(q.state && { state: stateField(q.state, "state") }),
      ...(q.since && { since: sinceField(q.since, "since", d.now()) }),
    };
    const p = await listOutputsPage(
      d.journal,
      filter,
      after === undefined
        ? { beforeSeq: before ?? Number.MAX_SAFE_INTEGER, limit: q.limit }
        : { afterSeq: after, limit: q.limit },
    );
    if (wantsJson(c)) return c.json(p);
    return page(c, d.shell(c), {
      title: "Outputs",
      path: "/outputs",
      body: outputsBody(q, filter, p),
    });
  });

  app.get("/outputs/:jobId", async (c) => {
    const jobId = c.req.param("jobId");
    let view: JobView;
    try {
      view = await showJob(d.journal, jobId);
    } catch (e) {
      if (!isIdemError(e, "NOT_FOUND")) throw e;
      try {
        view = showArchivedJob(d.config.journal.archiveDir, jobId);
      } catch (e2) {
        if (!isIdemError(e2, "NOT_FOUND")) throw e2;
        return notFound(c, d, `no output recorded for job ${jobId}, in the journal or its archive`);
      }
    }
    if (wantsJson(c)) return c.json(view);
    return page(c, d.shell(c), {
      title: `Output ${jobId}`,
      path: "/outputs/",
      live: view.archived ? undefined : d.liveMs,
      body: outputBody(view, !d.readOnly),
    });
  });

  app.get("/audit", async (c) => {
    const sinceText = c.req.query("since") ?? "";
    const since = sinceField(sinceText, "since", d.now());
    const report = await buildAudit(d.config, d.journal, d.effects, since);
    rememberAudit(d.journal, report, isAuditClean(report), d.now());
    if (wantsJson(c)) return c.json(report);
    return page(c, d.shell(c), {
      title: "Audit",
      path: "/audit",
      body: auditBody(report, isAuditClean(report), sinceText),
    });
  });
}

/** A 404 page (or JSON) saying what is missing. */
export function notFound(c: Context, d: ConsoleDeps, message: string) {
  if (wantsJson(c)) return c.json({ error: message }, 404);
  return page(c, d.shell(c), {
    title: "Not found",
    path: c.req.path,
    status: 404,
    body: html`<h1>Not found</h1><p>${message}</p><p><a href="/outputs">All outputs</a></p>`,
  });
}
