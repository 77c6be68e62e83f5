import { EFFECT_STATES, JOB_STATES, RUN_STATES } from "@idem/schema";
import { html } from "hono/html";
import { activityChart } from "../activity.js";
import { badge, type Html, time } from "../format.js";
import type { Overview } from "../views/read-overview.js";

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

/** The overview: alerts, the counts of `idem status`, the per-minute chart of the last hours. */
export function overviewBody(o: Overview): Html {
  const s = o.status;
  return html`<h1>Overview</h1>
${
  o.alerts.length > 0
    ? html`<section aria-labelledby="alerts-h"><h2 id="alerts-h">Alerts</h2><ul class="alerts" data-testid="alerts">${o.alerts.map(
        (a) =>
          html`<li data-alert="${a.kind}" role="alert">${a.message} — <a href="/dead-letters">dead letters</a></li>`,
      )}</ul></section>`
    : html`<p class="empty" data-testid="alerts">No alerts: ${o.deadLettersLastHour} dead letter(s) in the last hour (threshold ${o.deadLettersPerHour}), no uncertain effect, no dead run.</p>`
}
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
