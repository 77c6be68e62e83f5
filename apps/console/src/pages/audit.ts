import type { AuditReport } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import { parseEffectKey } from "@idem/schema";
import { html } from "hono/html";
import { type Html, table, time } from "../format.js";

/** What the console remembers of the last audit it ran, for the overview's alerts. */
export interface AuditMemory {
  at: number;
  /** Who ran it: a person on the audit page, or the background audit (`console.auditIntervalMs`). */
  by: "page" | "background";
  since: number | null;
  clean: boolean;
  /** The jobs whose effects drifted (the ledger says applied or present; the target lacks them). */
  driftJobs: string[];
  drift: number;
  duplicates: number;
}

/** Per console (its journal handle): the last audit it ran (page or background), in memory only. */
const memory = new WeakMap<JournalStore, AuditMemory>();

/** Notes an audit the audit page or the background audit ran, for the overview. */
export function rememberAudit(
  journal: JournalStore,
  r: AuditReport,
  clean: boolean,
  at: number,
  by: AuditMemory["by"] = "page",
) {
  memory.set(journal, {
    at,
    by,
    since: r.since,
    clean,
    driftJobs: driftJobs(r),
    drift: r.drift.length,
    duplicates: r.duplicates.length,
  });
}

/** The last audit this console ran, or undefined when none since it started. */
export const lastAudit = (journal: JournalStore): AuditMemory | undefined => memory.get(journal);

/** The jobs of the drifted effect keys (`<jobId>/<index>`), each once, in the report's order. */
function driftJobs(r: AuditReport): string[] {
  return [...new Set(r.drift.flatMap((d) => parseEffectKey(d.key)?.jobId ?? []))];
}

/** The replay page planning (dry run) a replay of `jobs`: the way back from drift. */
export function replayHref(jobs: readonly string[]): string {
  return `/replay?${new URLSearchParams({ jobs: jobs.join(" ") }).toString()}`;
}

/** The reconciliation table of `idem audit`, its duplicates, drift and unknown keys. */
export function auditBody(r: AuditReport, clean: boolean, since: string): Html {
  const rows: [string, number][] = [
    ["jobs enqueued", r.enqueued],
    ["outputs recorded", r.outputs],
    ["redeliveries skipped", r.redeliveriesSkipped],
    ["conflicts refused", r.conflictsRefused],
    ["effects applied", r.effects.applied],
    ["effects found present", r.effects.present],
    ["duplicate effects at targets", r.duplicateEffectsAtTargets],
    ["drift", r.drift.length],
    ["unknown keys at targets", r.unknownKeys.length],
    ["dead letters", r.deadLetters],
    ["unverifiable effects", r.unverifiable],
  ];
  return html`<h1>Audit</h1>
<form class="filters" method="get" action="/audit"><label>Since <input name="since" value="${since}" placeholder="all time; 2h, 7d or an ISO time"></label><button type="submit">Audit</button></form>
<p data-testid="verdict" class="flash ${clean ? "ok" : "err"}">${
    clean
      ? "Clean: every effect key at most once at its target, no drift, no unknown key."
      : "Not clean: duplicates, drift or unknown keys below (idem audit exits 3)."
  }${r.since !== null ? html` Since ${time(r.since)}.` : ""}</p>
${table(
  "Reconciliation",
  ["what", "count"],
  rows.map(
    ([k, v]) => html`<tr><th scope="row">${k}</th><td class="n" data-k="${k}">${v}</td></tr>`,
  ),
)}
${table(
  "Targets scanned",
  ["target", "keys"],
  r.targets.map((t) => html`<tr><td>${t.target}</td><td class="n">${t.keys}</td></tr>`),
  "No git target.",
)}
${table(
  "Duplicates",
  ["key", "count", "target", "commits"],
  r.duplicates.map(
    (d) =>
      html`<tr><td><code>${d.key}</code></td><td class="n">${d.count}</td><td>${d.target}</td><td>${d.commits.map((c) => html`<code title="${c}">${c.slice(0, 12)}</code> `)}</td></tr>`,
  ),
  "No duplicate.",
)}
${table(
  "Drift",
  ["key", "reason"],
  r.drift.map((d) => html`<tr><td><code>${d.key}</code></td><td>${d.reason}</td></tr>`),
  "No drift.",
)}
${table(
  "Unknown keys: at the target, with no recorded effect in the journal",
  ["key", "target", "commits"],
  r.unknownKeys
    .slice(0, 200)
    .map(
      (u) =>
        html`<tr><td><code>${u.key}</code></td><td>${u.target}</td><td>${u.commits.map((c) => html`<code title="${c}">${c.slice(0, 12)}</code> `)}</td></tr>`,
    ),
  "No unknown key.",
)}
${
  r.drift.length > 0
    ? html`<p data-testid="drift-replay">The ledger says these effects were applied; their targets lack them. <a href="${replayHref(driftJobs(r))}">Plan a replay of the ${driftJobs(r).length} job(s)</a>: a dry run first, each effect probed; only what is missing is sent again.</p>`
    : ""
}`;
}
