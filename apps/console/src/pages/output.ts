import { describeFilter, type JobView, type ShownEffect } from "@idem/core";
import type { RunRecord } from "@idem/journal";
import { html } from "hono/html";
import { badge, detail, type Html, short, table, time } from "../format.js";

function lineageCell(run: RunRecord): Html {
  const l = run.replay;
  if (!l) return html``;
  return html`<div class="lineage" data-testid="lineage-${run.generation}">replays generation ${l.replaysGeneration}, by <b>${l.actor}</b>${
    l.reason ? html`: “${l.reason}”` : ""
  }<br><span class="kv"><b>selection</b> <code>${JSON.stringify(l.selection)}</code></span><span class="kv"><b>effects</b> ${describeFilter(l.only)}</span></div>`;
}

/** An output's page: its body, runs by generation with their lineage, effects by generation, events. */
export function outputBody(v: JobView, canAct: boolean): Html {
  const o = v.output;
  const latest = v.runs[v.runs.length - 1];
  const byGen = new Map<number, ShownEffect[]>();
  for (const e of v.effects) {
    const list = byGen.get(e.generation) ?? [];
    list.push(e);
    byGen.set(e.generation, list);
  }
  const gens = [...byGen.keys()].sort((a, b) => b - a);
  return html`<h1>Output <code>${o.jobId}</code>${v.archived ? html` <span class="badge">archived</span>` : ""}</h1>
<div class="cards">
<div class="card"><div class="k">agent</div><div>${o.agent}</div></div>
<div class="card"><div class="k">source</div><div>${o.source}</div></div>
<div class="card"><div class="k">recorded</div><div>${time(o.recordedAt)}</div></div>
<div class="card"><div class="k">latest run</div><div data-testid="latest-state">${latest ? html`#${latest.generation} ${badge(latest.state)}` : "none"}</div></div>
</div>
${o.output.summary ? html`<p>${o.output.summary}</p>` : ""}
<p><a href="/replay?jobs=${encodeURIComponent(o.jobId)}">Plan a replay of this output</a>${
    canAct && latest?.state === "dead"
      ? html` · <a href="/dead-letters#${encodeURIComponent(o.jobId)}">retry or resolve this dead run</a>`
      : ""
  }</p>
<details><summary>body (${o.output.effects.length} effect(s), content ${o.contentHash.slice(0, 12)})</summary><pre data-testid="body">${JSON.stringify(o.output, null, 2)}</pre></details>
${table(
  "Runs by generation",
  [
    "gen",
    "state",
    "attempts",
    "lease expiries",
    "class",
    "last error",
    "created",
    "replay lineage",
  ],
  [...v.runs]
    .reverse()
    .map(
      (r) =>
        html`<tr data-gen="${r.generation}"><td class="n">${r.generation}</td><td>${badge(r.state)}</td><td class="n">${r.attempts}</td><td class="n">${r.leaseExpiries}</td><td>${r.class ?? ""}</td><td>${short(r.lastError)}</td><td>${time(r.createdAt)}</td><td>${lineageCell(r)}</td></tr>`,
    ),
)}
<h2>Effects</h2>
${
  gens.length === 0
    ? html`<p class="empty">No ledger row yet: the latest run has not decided its effects.</p>`
    : gens.map((g) =>
        table(
          `Generation ${g}`,
          ["key", "kind", "state", "detail"],
          (byGen.get(g) ?? []).map(
            (e) =>
              html`<tr data-key="${e.key}"><td><code>${e.key}</code></td><td>${e.kind}</td><td>${badge(e.state)}</td><td>${detail(e.detail)}</td></tr>`,
          ),
        ),
      )
}
<h2>Timeline</h2>
${
  v.events.length === 0
    ? html`<p class="empty">No event.</p>`
    : html`<ol class="timeline" data-testid="timeline">${v.events.map(
        (e) =>
          html`<li data-type="${e.type}">${time(e.at)} <b>${e.type}</b> by ${e.actor}${
            e.data ? html` <code>${JSON.stringify(e.data).slice(0, 160)}</code>` : ""
          }</li>`,
      )}</ol>`
}
${
  v.rejections.length > 0
    ? table(
        "Rejected conflicting submissions",
        ["at", "source", "content"],
        v.rejections.map(
          (r) =>
            html`<tr><td>${time(r.at)}</td><td>${r.source}</td><td><code>${r.contentHash.slice(0, 12)}</code></td></tr>`,
        ),
      )
    : ""
}`;
}
