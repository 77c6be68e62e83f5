import { changingJobIds, describeFilter, type ReplayPlan } from "@idem/core";
import { EFFECT_STATES, RUN_STATES } from "@idem/schema";
import { html } from "hono/html";
import { badge, flash, type Html, jobLink, table } from "../format.js";
import type { IdleInterpreters } from "../interpreter-watch.js";
import type { ReplayProgress } from "../views/replay-progress.js";

/** The replay form's fields as typed (strings, so they can be shown again and carried on). */
export interface ReplayQuery {
  jobs: string;
  agent: string;
  since: string;
  state: string;
  all: boolean;
  force: boolean;
  /** The effect filter: kinds, repos, roots, targets (config aliases). */
  kind: string[];
  repo: string[];
  root: string[];
  target: string[];
}

/** The names each filter field offers, from the config. */
export interface FilterChoices {
  kind: readonly string[];
  repo: readonly string[];
  root: readonly string[];
  target: readonly string[];
}

const FILTER_FIELDS = ["kind", "repo", "root", "target"] as const;

/** Rows of a plan shown on the page; the rest are counted (the JSON form has them all). */
const MAX_ROWS = 1000;

export function replayQueryParams(q: ReplayQuery): URLSearchParams {
  const p = new URLSearchParams();
  if (q.jobs) p.set("jobs", q.jobs);
  if (q.agent) p.set("agent", q.agent);
  if (q.since) p.set("since", q.since);
  if (q.state) p.set("state", q.state);
  if (q.all) p.set("all", "on");
  if (q.force) p.set("force", "on");
  for (const f of FILTER_FIELDS) for (const v of q[f]) p.append(f, v);
  return p;
}

function filterFields(q: ReplayQuery, choices: FilterChoices): Html {
  return html`<fieldset><legend>Only these effects (none ticked: every effect)</legend>${FILTER_FIELDS.filter(
    (f) => choices[f].length > 0,
  ).map(
    (f) =>
      html`<div class="choices" role="group" aria-label="${f}"><span class="kv"><b>${f}</b></span>${choices[
        f
      ].map(
        (v) =>
          html`<label class="check"><input type="checkbox" name="${f}" value="${v}"${
            q[f].includes(v) ? html` checked` : ""
          }> ${v}</label>`,
      )}</div>`,
  )}</fieldset>`;
}

function selectionForm(q: ReplayQuery, choices: FilterChoices): Html {
  return html`<form class="filters" method="get" action="/replay" data-testid="selection">
<label>Jobs <input name="jobs" value="${q.jobs}" placeholder="job IDs, space or comma separated" size="30"></label>
<label>Agent <input name="agent" value="${q.agent}"></label>
<label>Recorded since <input name="since" value="${q.since}" placeholder="2h, 7d or an ISO time"></label>
<label>Latest run state <select name="state"><option value="">any</option>${RUN_STATES.map(
    (s) => html`<option${s === q.state ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
<label class="check"><input type="checkbox" name="all"${q.all ? html` checked` : ""}> every output</label>
<label class="check"><input type="checkbox" name="force"${q.force ? html` checked` : ""}> force unprobeable</label>
${filterFields(q, choices)}
<button type="submit">Plan (dry run)</button>
</form>`;
}

function hiddenSelection(q: ReplayQuery): Html {
  return html`${[...replayQueryParams(q).entries()].map(
    ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
  )}`;
}

/** One plan row: key, job, generation, kind, action and reason. */
const planRow = (e: ReplayPlan["plan"][number]): Html =>
  html`<tr data-key="${e.key}" data-action="${e.action}"><td><code>${e.key}</code></td><td>${jobLink(e.jobId)}</td><td class="n">${e.generation}</td><td>${e.kind}</td><td>${badge(e.action)}</td><td>${e.reason}</td></tr>`;

/**
 * The plan of `idem replay --dry-run`, leading with what will change (the effects to apply, and
 * the conflicts and uncertain ones a person must look at) and the outputs that get a generation;
 * the effects found at their target (skip) come last, folded.
 */
function planView(plan: ReplayPlan, changing: readonly string[]): Html {
  const s = plan.summary;
  const changes = plan.plan.filter((e) => e.action !== "skip");
  const skips = plan.plan.filter((e) => e.action === "skip");
  const unchanged = plan.jobIds.length - changing.length;
  const head = ["key", "job", "gen", "kind", "action", "reason"];
  return html`<section data-testid="plan"><h2>Plan (dry run: nothing changed)</h2>
<div class="cards" data-testid="summary">${(["apply", "conflict", "uncertain"] as const).map(
    (a) =>
      html`<div class="card"><div class="v" data-k="summary.${a}">${s[a]}</div><div class="k">${badge(a)}</div></div>`,
  )}<div class="card"><div class="v" data-k="outputs">${changing.length}</div><div class="k">new generation(s)</div></div><div class="card quiet"><div class="v" data-k="summary.skip">${s.skip}</div><div class="k">${badge("skip")} already at the target</div></div></div>
<p data-testid="changes">${
    changing.length === 0
      ? html`<b>Nothing would change</b>: every selected effect is already at its target.`
      : html`<b>${changes.length} effect(s) would change</b>, in ${changing.length} output(s).`
  }${unchanged > 0 ? html` ${unchanged} selected output(s) whose every effect is at its target get no new generation.` : ""}</p>
${
  plan.busy.length > 0
    ? html`<p>${plan.busy.length} selected output(s) still being interpreted are left alone: ${plan.busy.slice(0, 20).map((j) => html`${jobLink(j)} `)}</p>`
    : ""
}
${
  plan.dead.length > 0
    ? html`<p data-testid="dead">${plan.dead.length} selected output(s) whose latest run is dead are left alone by a replay by effect (their other effects may be open): <a href="/dead-letters">retry or resolve them</a> first. ${plan.dead.slice(0, 20).map((j) => html`${jobLink(j)} `)}</p>`
    : ""
}
${s.conflict > 0 ? html`<p class="flash err">A conflict fails its run (the target moved): see docs/runbook.md before going on.</p>` : ""}
${
  plan.only
    ? html`<p data-testid="only">Only ${describeFilter(plan.only)}: ${plan.kept.length} other effect(s) of these outputs are left as they were (keep)${
        plan.untouched.length > 0
          ? html`; ${plan.untouched.length} selected output(s) with no such effect get no new generation`
          : ""
      }.</p>`
    : ""
}
${
  changes.length > 0
    ? table(`What will change (${changes.length})`, head, changes.slice(0, MAX_ROWS).map(planRow))
    : ""
}
${
  skips.length > 0
    ? html`<details data-testid="skips"><summary>${skips.length} effect(s) already at their target: skipped</summary>${table(
        `Already at their target (${skips.length})`,
        head,
        skips.slice(0, MAX_ROWS).map(planRow),
      )}</details>`
    : plan.plan.length === 0
      ? html`<p class="empty">The selection holds no effect.</p>`
      : ""
}
${
  plan.kept.length > 0
    ? html`<details><summary>${plan.kept.length} effect(s) outside the filter, kept as they were</summary>${table(
        `Kept as they were (${plan.kept.length})`,
        ["key", "job", "kind", "state", "reason"],
        plan.kept
          .slice(0, MAX_ROWS)
          .map(
            (k) =>
              html`<tr data-kept="${k.key}"><td><code>${k.key}</code></td><td>${jobLink(k.jobId)}</td><td>${k.kind}</td><td>${badge(k.state)}</td><td>${k.reason}</td></tr>`,
          ),
      )}</details>`
    : ""
}
${changes.length > MAX_ROWS || skips.length > MAX_ROWS ? html`<p>More rows than shown; add <code>format=json</code> to this page's URL for every one.</p>` : ""}
</section>`;
}

/** The replay page: the selection, and once chosen its plan and the confirmation form. */
export function replayBody(options: {
  query: ReplayQuery;
  choices: FilterChoices;
  plan: ReplayPlan | null;
  forms: { csrf: string; actor: string } | null;
  flash: { done?: string; error?: string };
}): Html {
  const { query: q, plan, forms } = options;
  const changing = plan ? changingJobIds(plan) : [];
  return html`<h1>Replay</h1>
${flash(options.flash)}
<p>Choose the outputs; the plan below is exactly what <code>idem replay --dry-run</code> computes: each effect probed at its target, nothing changed.</p>
${selectionForm(q, options.choices)}
${plan ? planView(plan, changing) : ""}
${
  plan && forms && changing.length > 0
    ? html`<form class="action" method="post" action="/replay" data-testid="confirm">
<input type="hidden" name="csrf" value="${forms.csrf}">${hiddenSelection(q)}
<label>Reason (required, recorded) <input name="reason" required maxlength="2000" size="40"></label>
<label>Actor <input name="actor" value="${forms.actor}" required maxlength="200"></label>
<button type="submit" class="danger">Create ${changing.length} new generation(s)</button>
</form><p class="empty">The plan is computed again when you confirm, and only the outputs it finds changing get a generation; they then wait for an interpreter (idem up, idem interpreter).</p>`
    : ""
}
${plan && !forms ? html`<p class="ro">Read-only console: replay with idem replay.</p>` : ""}`;
}

/** Progress of a replay's generations, updated live while an interpreter works through them. */
export function progressBody(
  p: ReplayProgress,
  meta: { actor: string; reason: string; at: number },
  idle: IdleInterpreters | null,
): Html {
  return html`<h1>Replay progress</h1>
<p>${p.total} generation(s) created by <b>${meta.actor}</b>: “${meta.reason}”.</p>
${
  idle
    ? html`<p class="flash err" role="alert" data-testid="no-interpreter">${idle.pending} run(s) have waited ${Math.round(idle.waitedMs / 1000)} s and no interpreter takes them: is one running? Start one with <code>idem interpreter</code> (or <code>idem up</code>) for this journal.</p>`
    : ""
}
<p data-testid="progress" data-remaining="${p.remaining}">${
    p.remaining === 0
      ? html`<b>Interpreted</b>: ${p.states.done} done, ${p.states.dead} dead; effects ${p.effects.applied} applied, ${p.effects.present} found present, ${p.effects.skipped} skipped, ${p.effects.failed + p.effects.uncertain} failed or uncertain.`
      : html`<progress max="${p.total}" value="${p.total - p.remaining}"></progress> ${p.total - p.remaining}/${p.total} interpreted; waiting for an interpreter (idem up, idem interpreter).`
  }</p>
<div class="cards">${RUN_STATES.map(
    (s) =>
      html`<div class="card"><div class="v" data-k="runs.${s}">${p.states[s]}</div><div class="k">${badge(s)}</div></div>`,
  )}</div>
<h2>Effects of these generations</h2>
<div class="cards" data-testid="effect-states">${EFFECT_STATES.map(
    (s) =>
      html`<div class="card"><div class="v" data-k="effects.${s}">${p.effects[s]}</div><div class="k">${badge(s)}</div></div>`,
  )}</div>
${table(
  "Runs",
  ["job", "gen", "state", "effects"],
  p.runs.map(
    (r) =>
      html`<tr data-run="${r.jobId}"><td>${jobLink(r.jobId)}</td><td class="n">${r.generation}</td><td>${badge(r.state)}</td><td>${
        r.effects.length === 0
          ? "not decided yet"
          : r.effects.map(
              (x) =>
                html`<span class="kv" data-effect="${x.key}"><code>${x.key}</code> ${badge(x.state)}</span> `,
            )
      }</td></tr>`,
  ),
)}`;
}
