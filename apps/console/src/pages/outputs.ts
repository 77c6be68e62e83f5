import { RUN_STATES } from "@idem/schema";
import { html } from "hono/html";
import { badge, type Html, jobLink, short, table, time } from "../format.js";
import type { OutputsFilter, OutputsPage } from "../views/list-outputs-page.js";

/** The filters as typed, for the form and the next page's link. */
export interface OutputsQuery {
  agent: string;
  state: string;
  since: string;
  limit: number;
}

/** The outputs list: a filter form (agent, state, time), the page, a link to the next one. */
export function outputsBody(q: OutputsQuery, _filter: OutputsFilter, p: OutputsPage): Html {
  const next = new URLSearchParams();
  if (q.agent) next.set("agent", q.agent);
  if (q.state) next.set("state", q.state);
  if (q.since) next.set("since", q.since);
  next.set("limit", String(q.limit));
  if (p.nextBeforeSeq !== undefined) next.set("before", String(p.nextBeforeSeq));
  if (p.nextAfterSeq !== undefined) next.set("after", String(p.nextAfterSeq));
  const more = p.nextBeforeSeq ?? p.nextAfterSeq;
  const newest = !("nextAfterSeq" in p);
  return html`<h1>Outputs</h1>
<form class="filters" method="get" action="/outputs" role="search">
<label>Agent <input name="agent" value="${q.agent}" placeholder="any"></label>
<label>State of the latest run <select name="state"><option value="">any</option>${RUN_STATES.map(
    (s) => html`<option${s === q.state ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
<label>Recorded since <input name="since" value="${q.since}" placeholder="2h, 7d or an ISO time"></label>
<label>Per page <input name="limit" type="number" min="1" max="500" value="${q.limit}"></label>
<button type="submit">Filter</button> <a href="/outputs">clear</a>
</form>
${table(
  newest ? "Outputs, newest first" : "Outputs in recording order",
  ["job", "agent", "effects", "gen", "state", "recorded", "summary"],
  p.rows.map(
    (r) =>
      html`<tr data-job="${r.jobId}"><td>${jobLink(r.jobId)}</td><td>${r.agent}</td><td class="n">${r.effects}</td><td class="n">${r.generation ?? ""}</td><td>${badge(r.state)}</td><td>${time(r.recordedAt)}</td><td>${short(r.summary, 80)}</td></tr>`,
  ),
  "No output matches.",
)}
${more !== undefined ? html`<p><a rel="next" href="/outputs?${next.toString()}">${newest ? "Older" : "Next page"} →</a></p>` : html`<p class="empty">End of the list.</p>`}`;
}
