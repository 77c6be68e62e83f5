import type { DeadLetterListing, DeadRun } from "@idem/core";
import { html } from "hono/html";
import {
  badge,
  detail,
  flash,
  type Html,
  jobHref,
  jobLink,
  short,
  table,
  time,
} from "../format.js";

/** What the action forms need: the CSRF token and who acts by default; null when read-only. */
export interface ActionForms {
  csrf: string;
  actor: string;
}

const hidden = (f: ActionForms, jobId: string): Html =>
  html`<input type="hidden" name="csrf" value="${f.csrf}"><input type="hidden" name="job" value="${jobId}">`;

const actorField = (f: ActionForms): Html =>
  html`<label>Actor <input name="actor" value="${f.actor}" required maxlength="200"></label>`;

function retryForm(f: ActionForms, jobId: string, what: string, secondary = false): Html {
  return html`<form class="action" method="post" action="/dead-letters/retry" data-action="retry">
${hidden(f, jobId)}${actorField(f)}<button type="submit"${secondary ? html` class="secondary"` : ""}>Retry ${what}</button></form>`;
}

/**
 * Failures a retry alone does the same again: the target moved (`conflict`), the output cannot
 * be applied as it is (`validation`, `logic`), or a person must say what happened (`uncertain`).
 * For those the page leads with what to look at and the decision; Retry comes after, plain.
 */
const RETRY_REPEATS = new Set(["conflict", "validation", "logic", "uncertain"]);

function resolveForm(f: ActionForms, run: DeadRun): Html {
  const id = `r-${run.jobId}`;
  return html`<form class="action" method="post" action="/dead-letters/resolve" data-action="resolve">
${hidden(f, run.jobId)}
<fieldset><legend>Decision on the open effect</legend>
<label class="check"><input type="radio" name="decision" value="applied" required> applied: it did happen (the probe checks it where it can)</label>
<label class="check"><input type="radio" name="decision" value="skipped"> skipped: it did not happen and must not be sent</label>
</fieldset>
<label for="${id}">Reason (required, recorded) <input id="${id}" name="reason" required minlength="1" maxlength="2000" size="40"></label>
${actorField(f)}<button type="submit" class="danger">Resolve</button></form>`;
}

function deadRun(run: DeadRun, forms: ActionForms | null): Html {
  return html`<article class="dead-run" id="${run.jobId}" data-job="${run.jobId}">
<h3>${jobLink(run.jobId)} · generation ${run.generation} ${badge("dead")}</h3>
<p><span class="kv"><b>class</b> ${run.class ?? "none"}</span><span class="kv"><b>attempts</b> ${run.attempts}</span><span class="kv"><b>lease expiries</b> ${run.leaseExpiries}</span><span class="kv"><b>at</b> ${time(run.updatedAt)}</span></p>
<p><b>last error</b> ${short(run.lastError, 400)}</p>
${table(
  "Open effects",
  ["key", "kind", "state", "detail"],
  run.effects.map(
    (e) =>
      html`<tr><td><code>${e.key}</code></td><td>${e.kind}</td><td>${badge(e.state)}</td><td>${detail(e.detail)}</td></tr>`,
  ),
  "No open effect: a retry makes a new generation.",
)}
${
  !forms
    ? ""
    : RETRY_REPEATS.has(run.class ?? "")
      ? html`<p data-testid="retry-repeats">A ${run.class} is not cured by trying again: look at the target first (<a href="${jobHref(run.jobId)}">the output and its effects</a>, <a href="/replay?jobs=${encodeURIComponent(run.jobId)}">a dry run</a> probes them now). Then resolve the open effect, or retry once the target is fixed.</p>${run.effects.length > 0 ? resolveForm(forms, run) : ""}${retryForm(forms, run.jobId, "(new generation)", true)}`
      : html`${retryForm(forms, run.jobId, "(new generation)")}${run.effects.length > 0 ? resolveForm(forms, run) : ""}`
}
</article>`;
}

/** Dead runs with their open effects, the uncertain ones, the dead-lettered jobs, and the actions. */
export function deadLettersBody(
  l: DeadLetterListing,
  forms: ActionForms | null,
  query: { done?: string; error?: string },
): Html {
  return html`<h1>Dead letters</h1>
${flash(query)}
${forms ? "" : html`<p class="ro">Read-only console: use idem dlq retry / idem dlq resolve.</p>`}
<h2>Dead runs (${l.runs.length})</h2>
${l.runs.length === 0 ? html`<p class="empty">No dead run.</p>` : l.runs.map((r) => deadRun(r, forms))}
${table(
  `Uncertain effects (${l.uncertain.length})`,
  ["key", "job", "gen", "kind", "detail"],
  l.uncertain.map(
    (u) =>
      html`<tr><td><code>${u.key}</code></td><td>${jobLink(u.jobId)}</td><td class="n">${u.generation}</td><td>${u.kind}</td><td>${detail(u.detail as Record<string, unknown> | null)}</td></tr>`,
  ),
  "No uncertain effect.",
)}
${table(
  `Dead-lettered jobs (${l.jobs.length})`,
  ["job", "agent", "class", "deliveries", "last error", "at", ""],
  l.jobs.map(
    (j) =>
      html`<tr data-job="${j.jobId}"><td><code>${j.jobId}</code></td><td>${j.agent ?? ""}</td><td>${j.class}</td><td class="n">${j.deliveries}</td><td>${short(j.lastError)}</td><td>${time(j.at)}</td><td>${forms ? retryForm(forms, j.jobId, "(queue again)") : ""}</td></tr>`,
  ),
  "No dead-lettered job.",
)}`;
}
