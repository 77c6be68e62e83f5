import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** What a page fragment renders to. */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** An ISO-8601 time to the millisecond cut to the second (`…T12:34:56.789Z` -> `…T12:34:56Z`). */
const toSecond = (iso: string): string =>
  iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, "Z");

/** A time in ms as ISO-8601 to the second, in UTC (empty for none). */
export function formatTime(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? "" : toSecond(new Date(ms).toISOString());
}

/** A `<time>` element for a time in ms. */
export function time(ms: number | null | undefined): Html {
  if (ms === null || ms === undefined) return html``;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${toSecond(iso)}</time>`;
}

/** A state as a badge (its colour comes from the stylesheet, its text says it). */
export function badge(state: string | null | undefined): Html {
  if (!state) return html`<span class="badge">none</span>`;
  return html`<span class="badge s-${state.replace(/[^a-z-]/g, "")}">${state}</span>`;
}

/** The console's URL of an output's page. */
export function jobHref(jobId: string): string {
  return `/outputs/${encodeURIComponent(jobId)}`;
}

export function jobLink(jobId: string): Html {
  return html`<a href="${jobHref(jobId)}">${jobId}</a>`;
}

/** A long text cut to `n` characters, whole in its title. */
export function short(s: string | null | undefined, n = 120): Html {
  if (s === null || s === undefined) return html``;
  if (s.length <= n) return html`${s}`;
  return html`<span title="${s}">${s.slice(0, n - 1)}…</span>`;
}

/** The fields of an effect's ledger detail a person looks for first. */
const DETAIL_FIELDS = [
  "commit",
  "path",
  "root",
  "repo",
  "branch",
  "url",
  "status",
  "subject",
  "decision",
  "actor",
  "reason",
  "error",
  "class",
] as const;

/**
 * An effect's ledger detail: the commit (its short sha, the whole one in its title), the file's
 * path, the HTTP status, the decision and its reason, then the whole JSON behind a disclosure.
 */
export function detail(d: Record<string, unknown> | null | undefined): Html {
  if (!d || Object.keys(d).length === 0) return html``;
  const parts = DETAIL_FIELDS.filter((k) => d[k] !== undefined && d[k] !== null).map((k) => {
    const v = d[k];
    const text = typeof v === "string" ? v : JSON.stringify(v);
    if (k === "commit" && typeof v === "string")
      return html`<span class="kv"><b>commit</b> <code title="${v}">${v.slice(0, 12)}</code></span>`;
    return html`<span class="kv"><b>${k}</b> ${short(text, 100)}</span>`;
  });
  return html`${parts}<details><summary>detail</summary><pre>${JSON.stringify(d, null, 2)}</pre></details>`;
}

/** A table with a caption; rows already rendered. */
export function table(
  caption: string,
  head: readonly string[],
  rows: Html[],
  empty = "none",
): Html {
  if (rows.length === 0)
    return html`<section><h2>${caption}</h2><p class="empty">${empty}</p></section>`;
  return html`<div class="scroll"><table><caption>${caption}</caption><thead><tr>${head.map(
    (h) => html`<th scope="col">${h}</th>`,
  )}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** A flash message carried in the query string after an action (Post/Redirect/Get). */
export function flash(query: { done?: string; error?: string }): Html {
  return html`${query.done ? html`<p class="flash ok" role="status">${query.done}</p>` : ""}${
    query.error ? html`<p class="flash err" role="alert">${query.error}</p>` : ""
  }`;
}
