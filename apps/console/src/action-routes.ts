import { randomUUID } from "node:crypto";
import {
  buildReplayPlan,
  changingJobIds,
  checkEffectFilter,
  createReplayRuns,
  type EffectFilter,
  filterChoices,
  listDeadLetters,
  replayPlanJson,
  replayReason,
  resolveUncertain,
  retryDead,
} from "@idem/core";
import type { ReplaySelection } from "@idem/journal";
import { describeError, httpStatusOfError, isIdemError } from "@idem/schema";
import type { Context, Hono } from "hono";
import { type ConsoleDeps, wantsJson } from "./deps.js";
import { page } from "./layout.js";
import { deadLettersBody } from "./pages/dead-letters.js";
import {
  type FilterChoices,
  progressBody,
  type ReplayQuery,
  replayBody,
  replayQueryParams,
} from "./pages/replay.js";
import { BadRequest, notFound, sinceField, stateField } from "./read-routes.js";
import { readReplayProgress } from "./views/replay-progress.js";

type Form = Record<string, string | File | (string | File)[]>;

/** A form field as text (the first value of a repeated one), trimmed; "" when absent. */
function field(form: Form, name: string): string {
  const v = form[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" ? first.trim() : "";
}

/** A required text field, or a 400 naming it. */
function required(form: Form, name: string, why: string): string {
  const v = field(form, name);
  if (v === "") throw new BadRequest(`${name} is required: ${why}`);
  return v;
}

/**
 * Whether an action's failure is a refusal to show with the form (a 4xx of ERROR_CODES: nothing
 * there, a state that does not allow it, a bad field); anything else goes to the console's error
 * page with its status (`httpStatusOfError`).
 */
const isRefusal = (e: unknown): boolean => httpStatusOfError(e) < 500;

/** The answer to an action: JSON for a script, otherwise back to `to` with a flash message. */
function answer(
  c: Context,
  to: string,
  outcome: { done: string; json: unknown } | { error: unknown },
) {
  if ("error" in outcome) {
    const message = describeError(outcome.error);
    if (wantsJson(c)) return c.json({ error: message }, httpStatusOfError(outcome.error));
    return c.redirect(
      `${to}${to.includes("?") ? "&" : "?"}error=${encodeURIComponent(message)}`,
      303,
    );
  }
  if (wantsJson(c)) return c.json(outcome.json);
  return c.redirect(
    `${to}${to.includes("?") ? "&" : "?"}done=${encodeURIComponent(outcome.done)}`,
    303,
  );
}

/** A repeated form field's values, trimmed, without the empty ones. */
function fields(form: Form, name: string): string[] {
  const v = form[name];
  const all = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return all.flatMap((x) => (typeof x === "string" && x.trim() !== "" ? [x.trim()] : []));
}

/** The replay form's fields, from a query or a posted form. */
function replayQuery(
  get: (name: string) => string,
  getAll: (name: string) => string[],
): ReplayQuery {
  return {
    jobs: get("jobs"),
    agent: get("agent"),
    since: get("since"),
    state: get("state"),
    all: get("all") !== "",
    force: get("force") !== "",
    kind: getAll("kind"),
    repo: getAll("repo"),
    root: getAll("root"),
    target: getAll("target"),
  };
}

/** The effect filter of a replay form, checked against the config (a 400 names the field). */
function filterOf(q: ReplayQuery, d: ConsoleDeps): EffectFilter | null {
  try {
    return checkEffectFilter(
      { kinds: q.kind, repos: q.repo, roots: q.root, targets: q.target },
      d.effects.kinds,
    );
  } catch (e) {
    if (isIdemError(e, "INVALID_INPUT")) throw new BadRequest(e.message.replace(/^--/, ""));
    throw e;
  }
}

/** What the filter's checkboxes offer: every effect kind and the config's names. */
function choicesOf(d: ConsoleDeps): FilterChoices {
  const c = filterChoices(d.effects.kinds);
  return {
    kind: c.kind,
    repo: c.repo,
    root: c.root,
    target: c.target,
  };
}

/** The journal's selection of a replay form; undefined when nothing is chosen yet. */
function selectionOf(q: ReplayQuery, now: number): ReplaySelection | undefined {
  const jobIds = q.jobs.split(/[\s,]+/).filter((j) => j !== "");
  const state = stateField(q.state, "state");
  const since = sinceField(q.since, "since", now);
  const s: ReplaySelection = {
    ...(jobIds.length > 0 && { jobIds }),
    ...(q.agent !== "" && { agent: q.agent }),
    ...(since !== undefined && { since }),
    ...(state !== undefined && { state }),
    ...(q.all && { all: true }),
  };
  return Object.keys(s).length === 0 ? undefined : s;
}

/** Dead letters (retry, resolve) and replay (plan, confirm, progress). */
export function actionRoutes(app: Hono, d: ConsoleDeps): void {
  const forms = (c: Context) =>
    d.readOnly ? null : { csrf: d.csrf(c), actor: actorDefault(c, d) };

  app.get("/dead-letters", async (c) => {
    const listing = await listDeadLetters(d.journal);
    if (wantsJson(c)) return c.json(listing);
    return page(c, d.shell(c), {
      title: "Dead letters",
      path: "/dead-letters",
      body: deadLettersBody(listing, forms(c), {
        done: c.req.query("done"),
        error: c.req.query("error"),
      }),
    });
  });

  app.post("/dead-letters/retry", async (c) => {
    const form = (await c.req.parseBody({ all: true })) as Form;
    const jobId = required(form, "job", "which job to retry");
    const actor = required(form, "actor", "who retries is recorded");
    try {
      const { job, run } = await retryDead(jobId, { config: d.config, journal: d.journal, actor });
      const done = job
        ? `${jobId}: dead-lettered job queued again (retry ${job.retry})`
        : `${jobId}: generation ${run?.generation} created (pending); an interpreter probes every effect again`;
      return answer(c, "/dead-letters", {
        done,
        json: job
          ? { ...job, requeued: true }
          : { jobId, generation: run?.generation, state: run?.state },
      });
    } catch (e) {
      if (!isRefusal(e)) throw e;
      return answer(c, "/dead-letters", { error: e });
    }
  });

  app.post("/dead-letters/resolve", async (c) => {
    const form = (await c.req.parseBody({ all: true })) as Form;
    const jobId = required(form, "job", "which dead run to resolve");
    const decision = field(form, "decision");
    if (decision !== "applied" && decision !== "skipped")
      throw new BadRequest("decision: choose applied or skipped");
    const reason = required(form, "reason", "say why, it is recorded");
    const actor = required(form, "actor", "who decides is recorded");
    try {
      const { effect, run } = await resolveUncertain(
        d.journal,
        jobId,
        { decision, reason, actor },
        d.effects,
      );
      return answer(c, "/dead-letters", {
        done: `${effect.key}: ${effect.state} (by ${actor}: ${reason}); run ${jobId}#${effect.generation} is ${run}`,
        json: {
          jobId,
          key: effect.key,
          generation: effect.generation,
          decision,
          state: effect.state,
          reason,
          actor,
          run,
        },
      });
    } catch (e) {
      if (!isRefusal(e)) throw e;
      return answer(c, "/dead-letters", { error: e });
    }
  });

  app.get("/replay", async (c) => {
    const q = replayQuery(
      (n) => (c.req.query(n) ?? "").trim(),
      (n) => (c.req.queries(n) ?? []).map((v) => v.trim()).filter((v) => v !== ""),
    );
    const selection = selectionOf(q, d.now());
    const only = filterOf(q, d);
    const plan = selection
      ? await buildReplayPlan({
          journal: d.journal,
          effects: d.effects,
          selection,
          forceUnprobeable: q.force,
          only,
        })
      : null;
    if (wantsJson(c)) {
      if (!plan) throw new BadRequest("choose what to replay: jobs, agent, since, state or all");
      return c.json(replayPlanJson(plan));
    }
    return page(c, d.shell(c), {
      title: "Replay",
      path: "/replay",
      body: replayBody({
        query: q,
        choices: choicesOf(d),
        plan,
        forms: forms(c),
        flash: { done: c.req.query("done"), error: c.req.query("error") },
      }),
    });
  });

  app.post("/replay", async (c) => {
    const form = (await c.req.parseBody({ all: true })) as Form;
    const q = replayQuery(
      (n) => field(form, n),
      (n) => fields(form, n),
    );
    const selection = selectionOf(q, d.now());
    if (!selection) throw new BadRequest("choose what to replay: jobs, agent, since, state or all");
    const only = filterOf(q, d);
    let reason: string;
    try {
      reason = replayReason(field(form, "reason"));
    } catch {
      throw new BadRequest(
        "reason is required: a replay changes the journal, say why (it is recorded)",
      );
    }
    const actor = required(form, "actor", "who replays is recorded");
    const plan = await buildReplayPlan({
      journal: d.journal,
      effects: d.effects,
      selection,
      forceUnprobeable: q.force,
      only,
    });
    // Only the outputs whose generation changes something: the count the confirm button showed.
    const changing = changingJobIds(plan);
    const created = await createReplayRuns(
      d.journal,
      { ...plan, jobIds: changing },
      {
        actor,
        reason,
        forceUnprobeable: q.force,
        ...(d.tracing && { tracing: d.tracing }),
      },
    );
    const id = randomUUID();
    const runs = created.map((r) => ({ jobId: r.jobId, generation: r.generation }));
    d.replays.set(id, { actor, reason, at: d.now(), runs });
    if (wantsJson(c))
      return c.json({
        summary: plan.summary,
        created: runs,
        unchanged: plan.jobIds.length - changing.length,
        progress: `/replay/runs/${id}`,
      });
    return c.redirect(`/replay/runs/${id}`, 303);
  });

  app.get("/replay/runs/:id", async (c) => {
    const r = d.replays.get(c.req.param("id"));
    if (!r)
      return notFound(
        c,
        d,
        "no such replay in this console's memory (it keeps the replays it made since it started)",
      );
    const [progress, idle] = await Promise.all([
      readReplayProgress(d.journal, r.runs),
      d.interpreters.check(d.now()),
    ]);
    if (wantsJson(c)) return c.json({ ...progress, idleInterpreters: idle });
    return page(c, d.shell(c), {
      title: "Replay progress",
      path: "/replay",
      live: d.liveMs,
      body: progressBody(progress, r, progress.remaining > 0 ? idle : null),
    });
  });
}

/** The actor a form offers: the console's own, marked as coming from the console. */
function actorDefault(_c: Context, d: ConsoleDeps): string {
  return d.actor;
}

export { replayQueryParams };
