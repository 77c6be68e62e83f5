import { EFFECT_STATES, JOB_STATES, RUN_STATES } from "@idem/schema";
import { html } from "hono/html";
import { activityChart } from "../activity.js";
import { badge, type Html, table, time } from "../format.js";
import type { Overview } from "../views/read-overview.js";
import { type AuditMemory, replayHref } from "./audit.js";

const card = (k: string, label: string, v: number, href?: string): Html =>
  html`<div class="card"><div class="v" data-k="${k}">${v}</div><div class="k">${
    href ? html`<a href="${href}">${label}</a>` : label
  }</div></div>`;

/** One card per state: its count (`data-k` is `<prefix>.<state>`), linked when `href` says where. */
const counts = (section: {
  title: string;
  prefix: string;
  states: readonly string[];
  values: Record<string, number>;
  href?: (s: string) => string;
}): Html => {
  const { title, prefix, states, values, href } = section;
  return html`<section><h2>${title}</h2><div class="cards">${states.map(
    (s) =>
      html`<div class="card"><div class="v" data-k="${prefix}.${s}">${values[s] ?? 0}</div><div class="k">${
        href ? html`<a href="${href(s)}">${badge(s)}</a>` : badge(s)
      }</div></div>`,
  )}</div></section>`;
};

/** What the last audit this console ran says, as an alert when it found drift or duplicates. */
function auditAlert(a: AuditMemory | undefined): Html | null {
  if (!a || a.clean) return null;
  const drift =
    a.drift > 0
      ? html` <a href="${replayHref(a.driftJobs)}">Plan a replay of the ${a.driftJobs.length} job(s)</a> (a dry run first).`
      : "";
  return html`<li data-alert="drift" role="alert">The audit of ${time(a.at)} found ${a.drift} effect(s) drifted (the ledger says applied; the target lacks them) and ${a.duplicates} duplicate(s) — <a href="/audit">audit again</a>.${drift}</li>`;
}

/** The audit's line under the alerts: when it last ran here, or that it has not. */
function auditNote(a: AuditMemory | undefined): Html {
  if (!a)
    return html`<p class="empty" data-testid="audit-note">No audit run from this console since it started: drift (an effect the ledger says is applied, missing at its target) shows only in one. <a href="/audit">Run an audit</a>.</p>`;
  if (a.clean)
    return html`<p class="empty" data-testid="audit-note">The audit of ${time(a.at)} was clean: no drift, no duplicate. <a href="/audit">Audit again</a>.</p>`;
  return html``;
}

/** The jobs a delivery holds, with the holder and the lease end: none waits invisibly. */
function leasedSection(o: Overview): Html {
  if (o.leased.length === 0) return html``;
  return html`<section data-testid="leased"><h2>Jobs under a delivery's lease</h2>
<p class="empty">An executor runs each job's agent under a lease it extends; one whose executor died waits until its lease ends, then the next claim takes it over (<code>idem jobs</code> lists every waiting job).</p>
${table(
  "Leased jobs",
  ["job", "agent", "holder", "lease ends", "delivery"],
  o.leased.map(
    (l) =>
      html`<tr data-leased="${l.jobId}"><td>${l.jobId}</td><td>${l.agent}</td><td><code>${l.holder ?? ""}</code></td><td>${time(l.leaseUntil)}${l.ended ? html` ${badge("expired")} (its executor died or stalled: the next claim takes it)` : ""}</td><td class="n">${l.deliveries}</td></tr>`,
  ),
)}</section>`;
}

/** The overview: alerts, the counts of `idem status`, the per-minute chart of the last hours. */
export function overviewBody(o: Overview, audit?: AuditMemory): Html {
  const s = o.status;
  const audited = audit !== undefined && !audit.clean;
  const fromAudit = auditAlert(audit);
  return html`<h1>Overview</h1>
${
  o.alerts.length > 0 || audited
    ? html`<section aria-labelledby="alerts-h"><h2 id="alerts-h">Alerts</h2><ul class="alerts" data-testid="alerts">${o.alerts.map(
        (a) =>
          html`<li data-alert="${a.kind}" role="alert">${a.message} — <a href="/dead-letters">dead letters</a></li>`,
      )}${fromAudit ?? ""}</ul></section>`
    : html`<p class="empty" data-testid="alerts">No alerts: ${o.deadLettersLastHour} dead letter(s) in the last hour (threshold ${o.deadLettersPerHour}), no uncertain effect, no dead run.</p>`
}
${auditNote(audit)}
${leasedSection(o)}
<section><h2>Journal</h2><div class="cards">
${card("outputs", "outputs", s.outputs, "/outputs")}
${card("rejections", "rejections", s.rejections)}
${card("deadLetters", "open dead letters", s.deadLetters, "/dead-letters")}
${JOB_STATES.map((j) => card(`jobs.${j}`, `jobs ${j}`, s.jobs[j]))}
</div></section>
${counts({
  title: "Runs (latest per output)",
  prefix: "runs",
  states: RUN_STATES,
  values: s.runs,
  href: (st) => `/outputs?state=${st}`,
})}
${counts({ title: "Effects (ledger rows)", prefix: "effects", states: EFFECT_STATES, values: s.effects })}
<section><h2>Activity</h2>${activityChart(o.activity)}</section>
<p class="empty">Read at ${time(o.at)}; this page updates by itself.</p>`;
}
