import type { AwaitingRun, OutputRecord } from "@idem/journal";
import type { EffectSpec } from "@idem/schema";
import { html } from "hono/html";
import { flash, type Html, jobLink, time } from "../format.js";
import type { ActionForms } from "./dead-letters.js";

/** A run awaiting a decision, with its recorded output and each awaited effect described. */
export interface AwaitingView {
  run: AwaitingRun;
  output: OutputRecord;
  /** Each awaited effect: its index, its kind's one line (`describe`) and its spec as recorded. */
  effects: { index: number; kind: string; line: string; spec: EffectSpec }[];
}

/** One field of a spec as it will be sent: text as it is (a PR's body, a Slack text), else JSON. */
function fieldValue(value: unknown): Html {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return html`<pre class="spec-field">${text}</pre>`;
}

/** Exactly what an effect will do: its one line, then every field of its recorded spec. */
function effectCard(e: AwaitingView["effects"][number]): Html {
  const fields = Object.entries(e.spec).filter(([k]) => k !== "kind");
  return html`<section class="awaited-effect" data-effect="${e.index}">
<h3>Effect ${e.index} · <code>${e.kind}</code></h3>
<p class="describe" data-testid="describe">${e.line}</p>
<dl>${fields.map(([k, v]) => html`<dt>${k}</dt><dd data-field="${k}">${fieldValue(v)}</dd>`)}</dl>
</section>`;
}

const hidden = (f: ActionForms, v: AwaitingView): Html =>
  html`<input type="hidden" name="csrf" value="${f.csrf}"><input type="hidden" name="job" value="${v.run.jobId}"><input type="hidden" name="digest" value="${v.output.contentHash}">`;

const decisionFields = (f: ActionForms, id: string): Html =>
  html`<label for="${id}">Reason (required, recorded) <input id="${id}" name="reason" required minlength="1" maxlength="2000" size="40"></label>
<label>Operator <input name="actor" value="${f.actor}" required maxlength="200"></label>`;

function forms(f: ActionForms, v: AwaitingView): Html {
  const id = v.run.jobId;
  return html`<form class="action" method="post" action="/approvals/approve" data-action="approve">
${hidden(f, v)}
<fieldset><legend>Effects to approve</legend>${v.effects.map(
    (e) =>
      html`<label class="check"><input type="checkbox" name="effect" value="${e.index}" checked> effect ${e.index} (${e.kind})</label>`,
  )}</fieldset>
${decisionFields(f, `a-${id}`)}<button type="submit">Approve</button></form>
<form class="action" method="post" action="/approvals/reject" data-action="reject">
${hidden(f, v)}${decisionFields(f, `r-${id}`)}<button type="submit" class="danger">Reject</button></form>`;
}

function awaitingRun(v: AwaitingView, f: ActionForms | null): Html {
  const r = v.run;
  return html`<article class="awaiting" id="${r.jobId}" data-job="${r.jobId}">
<h2>${jobLink(r.jobId)} · generation ${r.generation} · agent ${r.agent}</h2>
<p><span class="kv"><b>waiting since</b> ${time(r.since)}</span><span class="kv"><b>expires</b> ${time(r.request.expiresAt)}</span><span class="kv"><b>rules</b> ${r.request.rules.join(", ")}</span></p>
<p><span class="kv"><b>output digest</b> <code>${v.output.contentHash}</code></span></p>
${v.effects.map(effectCard)}
${f ? forms(f, v) : ""}
</article>`;
}

/** The runs awaiting a person's approval, each with exactly what its awaited effects will do. */
export function approvalsBody(
  views: readonly AwaitingView[],
  f: ActionForms | null,
  query: { done?: string; error?: string },
): Html {
  return html`<h1>Approvals</h1>
${flash(query)}
<p>Each run below stopped before an effect that a rule of <code>approvals.rules</code> names. Nothing of these effects was applied; an approval is bound to the output's digest shown and is used once (docs/approvals.md).</p>
${f ? "" : html`<p class="ro">Read-only console: use idem approve / idem reject.</p>`}
${views.length === 0 ? html`<p class="empty">No run awaits an approval.</p>` : views.map((v) => awaitingRun(v, f))}`;
}
