import { decideApproval } from "@idem/core";
import { describeError, type EffectSpec, httpStatusOfError, systemClock } from "@idem/schema";
import type { Context, Hono } from "hono";
import { type ConsoleDeps, wantsJson } from "./deps.js";
import { page } from "./layout.js";
import { type AwaitingView, approvalsBody } from "./pages/approvals.js";
import { BadRequest } from "./read-routes.js";

type Form = Record<string, string | File | (string | File)[]>;

const text = (form: Form, name: string): string => {
  const v = form[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" ? first.trim() : "";
};

/** The runs awaiting a decision with their outputs and each awaited effect described. */
async function awaitingViews(d: ConsoleDeps): Promise<AwaitingView[]> {
  const views: AwaitingView[] = [];
  for (const run of await d.journal.approvals.awaiting(100)) {
    const output = await d.journal.outputs.get(run.jobId);
    if (!output) continue;
    const effects = run.request.effects.flatMap((index) => {
      const spec = output.output.effects[index] as EffectSpec | undefined;
      if (!spec) return [];
      const line = d.effects.kinds.get(spec.kind)?.describe?.(spec) ?? spec.kind;
      return [{ index, kind: spec.kind, line, spec }];
    });
    views.push({ run, output, effects });
  }
  return views;
}

/**
 * The approvals page (docs/approvals.md): every run awaiting a person, with exactly what its
 * awaited effects will do (each kind's `describe` and the recorded spec: a commit's files, a pull
 * request's title and body, a Slack text, an SQL statement's parameters), and one-click approve or
 * reject. The forms carry the session's CSRF token (checked for every POST) and the output's digest
 * as shown: a decision is bound to what the operator saw.
 */
export function approvalRoutes(app: Hono, d: ConsoleDeps): void {
  const forms = (c: Context) => (d.readOnly ? null : { csrf: d.csrf(c), actor: d.actor });

  app.get("/approvals", async (c) => {
    const views = await awaitingViews(d);
    if (wantsJson(c)) return c.json({ awaiting: views });
    return page(c, d.shell(c), {
      title: "Approvals",
      path: "/approvals",
      body: approvalsBody(views, forms(c), {
        done: c.req.query("done"),
        error: c.req.query("error"),
      }),
    });
  });

  for (const action of ["approve", "reject"] as const) {
    app.post(`/approvals/${action}`, async (c) => {
      const form = (await c.req.parseBody({ all: true })) as Form;
      const jobId = text(form, "job");
      const reason = text(form, "reason");
      const actor = text(form, "actor");
      if (jobId === "") throw new BadRequest("job is required: which run to decide");
      if (reason === "") throw new BadRequest("reason is required: say why, it is recorded");
      if (actor === "") throw new BadRequest("actor is required: who decides is recorded");
      const raw = form.effect;
      const chosen = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).flatMap((v) =>
        typeof v === "string" && /^\d+$/.test(v) ? [Number(v)] : [],
      );
      if (action === "approve" && chosen.length === 0)
        throw new BadRequest("effect: choose at least one effect to approve");
      const digest = text(form, "digest");
      try {
        const r = await decideApproval(d.journal, d.config.approvals, systemClock, {
          jobId,
          approve: action === "approve",
          reason,
          actor,
          effects: action === "approve" ? chosen : undefined,
          digest: digest === "" ? undefined : digest,
        });
        if (wantsJson(c)) return c.json(r);
        const done = `${jobId}: ${r.decision} by ${actor} (${reason})`;
        return c.redirect(`/approvals?done=${encodeURIComponent(done)}`, 303);
      } catch (e) {
        if (httpStatusOfError(e) >= 500) throw e;
        if (wantsJson(c)) return c.json({ error: describeError(e) }, httpStatusOfError(e));
        return c.redirect(`/approvals?error=${encodeURIComponent(describeError(e))}`, 303);
      }
    });
  }
}
