import { describeFilter, type JobView, type ShownEffect } from "@idem/core";
import type { RunRecord } from "@idem/journal";
import { raw } from "hono/html";
import {
  badgeTag,
  detailHtml,
  escapeHtml as e,
  eventDataHtml,
  type Html,
  ownerHtml,
  shortHtml,
  tableHtml,
  timeTag,
} from "../format.js";

function lineageCell(run: RunRecord): string {
  const l = run.replay;
  if (!l) return "";
  return `<div class="lineage" data-testid="lineage-${run.generation}">replays generation ${l.replaysGeneration}, by <b>${e(l.actor)}</b>${
    l.reason ? `: “${e(l.reason)}”` : ""
  }<br><span class="kv"><b>selection</b> <code>${e(JSON.stringify(l.selection))}</code></span><span class="kv"><b>effects</b> ${e(describeFilter(l.only))}</span></div>`;
}

/**
 * An output's page: its body, runs by generation with their lineage, effects by generation,
 * events. Made as one string (every value escaped): the page read most, live, on every poll.
 */
export function outputBody(v: JobView, canAct: boolean): Html {
  const o = v.output;
  const job = e(o.jobId);
  const jobParam = e(encodeURIComponent(o.jobId));
  const latest = v.runs[v.runs.length - 1];
  const byGen = new Map<number, ShownEffect[]>();
  for (const x of v.effects) {
    const list = byGen.get(x.generation) ?? [];
    list.push(x);
    byGen.set(x.generation, list);
  }
  const gens = [...byGen.keys()].sort((a, b) => b - a);
  const runs = [...v.runs]
    .reverse()
    .map(
      (r) =>
        `<tr data-gen="${r.generation}"><td class="n">${r.generation}</td><td>${badgeTag(r.state)}</td><td class="n">${r.attempts}</td><td class="n">${r.leaseExpiries}</td><td>${e(r.class ?? "")}</td><td>${shortHtml(r.lastError)}</td><td>${timeTag(r.createdAt)}</td><td>${lineageCell(r)}</td></tr>`,
    );
  const effects =
    gens.length === 0
      ? `<p class="empty">No ledger row yet: the latest run has not decided its effects.</p>`
      : gens
          .map((g) =>
            tableHtml(
              `Generation ${g}`,
              ["key", "kind", "state (as the ledger last saw it)", "since", "detail"],
              (byGen.get(g) ?? []).map(
                (x) =>
                  `<tr data-key="${e(x.key)}"><td><code>${e(x.key)}</code></td><td>${e(x.kind)}</td><td>${badgeTag(x.state)}</td><td>${timeTag(x.updatedAt)}</td><td>${detailHtml(x.detail)}</td></tr>`,
              ),
            ),
          )
          .join("");
  const timeline =
    v.events.length === 0
      ? `<p class="empty">No event.</p>`
      : `<ol class="timeline" data-testid="timeline">${v.events
          .map(
            (x) =>
              `<li data-type="${e(x.type)}">${timeTag(x.at)} <span class="ev">${e(x.type)}</span> <span class="by">by ${ownerHtml(x.actor)}</span> ${eventDataHtml(x.data)}</li>`,
          )
          .join("")}</ol>`;
  const rejections =
    v.rejections.length > 0
      ? tableHtml(
          "Rejected conflicting submissions",
          ["at", "source", "content"],
          v.rejections.map(
            (r) =>
              `<tr><td>${timeTag(r.at)}</td><td>${e(r.source)}</td><td><code>${e(r.contentHash.slice(0, 12))}</code></td></tr>`,
          ),
        )
      : "";
  return raw(`<h1>Output <code>${job}</code>${v.archived ? ` <span class="badge">archived</span>` : ""}</h1>
<div class="cards">
<div class="card"><div class="k">agent</div><div>${e(o.agent)}</div></div>
<div class="card"><div class="k">source</div><div>${e(o.source)}</div></div>
<div class="card"><div class="k">recorded</div><div>${timeTag(o.recordedAt)}</div></div>
<div class="card"><div class="k">latest run</div><div data-testid="latest-state">${latest ? `#${latest.generation} ${badgeTag(latest.state)}` : "none"}</div></div>
</div>
${o.output.summary ? `<p>${e(o.output.summary)}</p>` : ""}
<p><a href="/replay?jobs=${jobParam}">Plan a replay of this output</a>${
    canAct && latest?.state === "dead"
      ? ` · <a href="/dead-letters#${jobParam}">retry or resolve this dead run</a>`
      : ""
  }</p>
<details><summary>body (${o.output.effects.length} effect(s), content ${e(o.contentHash.slice(0, 12))})</summary><pre data-testid="body">${e(JSON.stringify(o.output, null, 2))}</pre></details>
${tableHtml(
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
  runs,
)}
<h2>Effects</h2>
<p class="empty" data-testid="ledger-note">A state is what the ledger last recorded, at the time shown: nobody has looked at the target since (a file deleted or a branch reset by hand is not seen here). To check the targets now, <a href="/audit">run an audit</a>, or <a href="/replay?jobs=${jobParam}">plan a replay of this output</a>, whose dry run probes each effect.</p>
${effects}
<h2>Timeline</h2>
${timeline}
${rejections}`);
}
