import { EFFECT_STATES, JOB_STATES, RUN_STATES } from "@idem/schema";
import { html } from "hono/html";
import { activityChart } from "../activity.js";
import type { BackgroundAuditState } from "../background-audit.js";
import { badge, type Html, owner, table, time } from "../format.js";
import type { IdleInterpreters } from "../interpreter-watch.js";
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

/** An audit as the overview names it: who ran it and when. */
const auditName = (a: AuditMemory): Html =>
  html`The ${a.by === "background" ? "background audit" : "audit"} of ${time(a.at)}`;

/** What the last audit this console ran says, as an alert when it found drift or duplicates. */
function auditAlert(a: AuditMemory | undefined): Html | null {
  if (!a || a.clean) return null;
  const drift =
    a.drift > 0
      ? html` <a href="${replayHref(a.driftJobs)}">Plan a replay of the ${a.driftJobs.length} job(s)</a> (a dry run first).`
      : "";
  return html`<li data-alert="drift" role="alert">${auditName(a)} found ${a.drift} effect(s) drifted (the ledger says applied; the target lacks them) and ${a.duplicates} duplicate(s) — <a href="/audit">audit again</a>.${drift}</li>`;
}

/** Minutes, for a period: `10 min`, or seconds under one. */
const period = (ms: number): string =>
  ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;

/** The audit's line under the alerts: the background audit's period, its last result or failure. */
function auditNote(a: AuditMemory | undefined, background: BackgroundAuditState | null): Html {
  const every = background
    ? html`The console audits the targets in the background every ${period(background.intervalMs)} (the outputs of the last ${Math.round(background.windowMs / 3_600_000)} h; <code>console.auditIntervalMs</code>).`
    : html`No background audit (<code>console.auditIntervalMs</code> is null): drift (an effect the ledger says is applied, missing at its target) shows only in an audit.`;
  const failed = background?.error
    ? html` <span class="flash err" data-testid="audit-failed">The background audit of ${time(background.error.at)} failed: ${background.error.message}; it runs again at its next period.</span>`
    : "";
  if (!a)
    return html`<p class="empty" data-testid="audit-note">${every}${background ? " The first runs a few seconds after the console starts." : ""} <a href="/audit">Audit now</a>.${failed}</p>`;
  if (a.clean)
    return html`<p class="empty" data-testid="audit-note">${auditName(a)} was clean: no drift, no duplicate. ${every} <a href="/audit">Audit now</a>.${failed}</p>`;
  return html`<p class="empty" data-testid="audit-note">${every}${failed}</p>`;
}

/** The warning that runs wait with no interpreter taking them, and how to start one. */
function idleAlert(idle: IdleInterpreters | null): Html | null {
  if (!idle) return null;
  return html`<li data-alert="no-interpreter" role="alert">${idle.pending} run(s) have waited ${Math.round(idle.waitedMs / 1000)} s and no interpreter takes them: is one running? Start one with <code>idem interpreter</code> (or <code>idem up</code>).</li>`;
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
      html`<tr data-leased="${l.jobId}"><td>${l.jobId}</td><td>${l.agent}</td><td>${owner(l.holder)}</td><td>${time(l.leaseUntil)}${l.ended ? html` ${badge("expired")} (its executor died or stalled: the next claim takes it)` : ""}</td><td class="n">${l.deliveries}</td></tr>`,
  ),
)}</section>`;
}

/** The overview: alerts, the counts of `idem status`, the per-minute chart of the last hours. */
export function overviewBody(
  o: Overview,
  audit: AuditMemory | undefined,
  watch: { background: BackgroundAuditState | null; idle: IdleInterpreters | null },
): Html {
  const s = o.status;
  const extra = [auditAlert(audit), idleAlert(watch.idle)].filter((a) => a !== null);
  // One name for what waits in the dead letters: dead runs (an output whose interpretation died)
  // and dead-lettered jobs (a job that never got an output), as `idem dlq ls` lists them.
  const dead = s.runs.dead + s.deadLetters;
  return html`<h1>Overview</h1>
${
  o.alerts.length > 0 || extra.length > 0
    ? html`<section aria-labelledby="alerts-h"><h2 id="alerts-h">Alerts</h2><ul class="alerts" data-testid="alerts">${o.alerts.map(
        (a) =>
          html`<li data-alert="${a.kind}" role="alert">${a.message} — <a href="/dead-letters">dead letters</a></li>`,
      )}${extra}</ul></section>`
    : html`<p class="empty" data-testid="alerts">No alerts: no dead letter, no uncertain effect; ${o.deadLettersLastHour} job(s) dead-lettered in the last hour (threshold ${o.deadLettersPerHour}).</p>`
}
${auditNote(audit, watch.background)}
${leasedSection(o)}
<section><h2>Journal</h2><div class="cards">
${card("outputs", "outputs", s.outputs, "/outputs")}
${card("rejections", "rejections", s.rejections)}
${card("approvals.awaiting", "runs awaiting approval", s.runs.awaiting, "/approvals")}
<div class="card"><div class="v" data-k="deadLetters">${dead}</div><div class="k"><a href="/dead-letters">dead letters</a>: <span data-k="deadLetters.runs">${s.runs.dead}</span> run(s), <span data-k="deadLetters.jobs">${s.deadLetters}</span> job(s)</div></div>
${card("jobs.queued", "jobs queued (due now)", s.jobs.queued - s.jobsWaiting)}
${card("jobs.waiting", "jobs waiting for a retry", s.jobsWaiting)}
${JOB_STATES.filter((j) => j !== "queued").map((j) => card(`jobs.${j}`, `jobs ${j}`, s.jobs[j]))}
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
