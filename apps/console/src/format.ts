import { redactUrl } from "@idem/schema";
import { html, raw } from "hono/html";
import { escapeToBuffer, type HtmlEscapedString } from "hono/utils/html";

/** What a page fragment renders to. */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** An ISO-8601 time to the millisecond cut to the second (`…T12:34:56.789Z` -> `…T12:34:56Z`). */
const toSecond = (iso: string): string =>
  iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, "Z");

/** A time in ms as ISO-8601 to the second, in UTC (empty for none). */
export function formatTime(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? "" : toSecond(new Date(ms).toISOString());
}

/**
 * Text escaped for HTML, as hono's `html` escapes what it interpolates: the string builders below
 * (`…Tag`, `…Html`) make the output page, the console's most read one, as one string.
 */
export function escapeHtml(text: string): string {
  const buffer: [string] = [""];
  escapeToBuffer(text, buffer);
  return buffer[0];
}

/** A `<time>` element for a time in ms, as HTML text (empty for none). */
export function timeTag(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  const iso = new Date(ms).toISOString();
  return `<time datetime="${iso}">${toSecond(iso)}</time>`;
}

/** A `<time>` element for a time in ms. */
export function time(ms: number | null | undefined): Html {
  return raw(timeTag(ms));
}

/** A state as a badge, as HTML text (its colour comes from the stylesheet, its text says it). */
export function badgeTag(state: string | null | undefined): string {
  if (!state) return `<span class="badge">none</span>`;
  return `<span class="badge s-${state.replace(/[^a-z-]/g, "")}">${escapeHtml(state)}</span>`;
}

/** A state as a badge (its colour comes from the stylesheet, its text says it). */
export function badge(state: string | null | undefined): Html {
  return raw(badgeTag(state));
}

/** The console's URL of an output's page. */
export function jobHref(jobId: string): string {
  return `/outputs/${encodeURIComponent(jobId)}`;
}

export function jobLink(jobId: string): Html {
  return html`<a href="${jobHref(jobId)}">${jobId}</a>`;
}

/**
 * A long text cut to `n` characters, whole in its title, as HTML text; its URLs' credentials
 * redacted (an error naming a server, docs/security.md).
 */
export function shortHtml(text: string | null | undefined, n = 120): string {
  if (text === null || text === undefined) return "";
  const s = redactUrl(text);
  if (s.length <= n) return escapeHtml(s);
  return `<span title="${escapeHtml(s)}">${escapeHtml(s.slice(0, n - 1))}…</span>`;
}

/** A long text cut to `n` characters, whole in its title. */
export function short(s: string | null | undefined, n = 120): Html {
  return raw(shortHtml(s, n));
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
 * An effect's ledger detail as HTML text: the commit (its short sha, the whole one in its title),
 * the file's path, the HTTP status, the decision and its reason, then the whole JSON behind a
 * disclosure.
 */
export function detailHtml(d: Record<string, unknown> | null | undefined): string {
  if (!d || Object.keys(d).length === 0) return "";
  let out = "";
  for (const k of DETAIL_FIELDS) {
    const v = d[k];
    if (v === undefined || v === null) continue;
    if (k === "commit" && typeof v === "string") {
      out += `<span class="kv"><b>commit</b> <code title="${escapeHtml(v)}">${escapeHtml(v.slice(0, 12))}</code></span>`;
      continue;
    }
    out += `<span class="kv"><b>${k}</b> ${shortHtml(typeof v === "string" ? v : JSON.stringify(v), 100)}</span>`;
  }
  return `${out}<details><summary>detail</summary><pre>${escapeHtml(redactUrl(JSON.stringify(d, null, 2)))}</pre></details>`;
}

/** An effect's ledger detail (see `detailHtml`). */
export function detail(d: Record<string, unknown> | null | undefined): Html {
  return raw(detailHtml(d));
}

/** A table with a caption, as HTML text; rows already rendered as HTML text. */
export function tableHtml(
  caption: string,
  head: readonly string[],
  rows: readonly string[],
  empty = "none",
): string {
  if (rows.length === 0)
    return `<section><h2>${escapeHtml(caption)}</h2><p class="empty">${escapeHtml(empty)}</p></section>`;
  return `<div class="scroll"><table><caption>${escapeHtml(caption)}</caption><thead><tr>${head
    .map((h) => `<th scope="col">${escapeHtml(h)}</th>`)
    .join("")}</tr></thead><tbody>${rows.join("")}</tbody></table></div>`;
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

/**
 * An owner ID as HTML text: `<host>:<pid>:<random>`, the part log lines and `ps` agree on, with
 * the whole ID (boot ID, PID namespace, start time) in its title.
 */
export function ownerHtml(owner: string | null | undefined): string {
  if (!owner) return "";
  const at = owner.indexOf("@");
  if (at <= 0) return escapeHtml(owner);
  return `<code title="${escapeHtml(owner)}">${escapeHtml(owner.slice(0, at))}</code>`;
}

/** An owner ID, short, whole in its title (see `ownerHtml`). */
export const owner = (id: string | null | undefined): Html => raw(ownerHtml(id));

/** A nested value in words: `a: 1, b: x y` for an object, items by commas for an array. */
function plainText(v: unknown): string {
  if (Array.isArray(v)) return v.map(plainText).join(", ");
  if (v !== null && typeof v === "object")
    return Object.entries(v)
      .filter(([, x]) => x !== null && x !== undefined)
      .map(([k, x]) => `${k}: ${plainText(x)}`)
      .join(", ");
  return String(v);
}

/** Fields of an event's data that name a process. */
const OWNER_KEYS = new Set(["owner", "previousOwner", "holder", "leaseOwner"]);

/**
 * An event's data as HTML text a person reads: `name value` pairs (nulls left out), owner IDs
 * short, an effect's detail by its telling fields (a commit's short sha, a path, a status), any
 * other object as short JSON, every long value cut with the whole in its title.
 */
export function eventDataHtml(data: Record<string, unknown> | null | undefined): string {
  if (!data) return "";
  const parts: string[] = [];
  for (const [k, v] of Object.entries(data)) {
    if (v === null || v === undefined) continue;
    let value: string;
    if (OWNER_KEYS.has(k) && typeof v === "string") value = ownerHtml(v);
    else if (k === "detail" && typeof v === "object" && !Array.isArray(v)) {
      const d = v as Record<string, unknown>;
      const telling = DETAIL_FIELDS.filter((f) => d[f] !== undefined && d[f] !== null);
      if (telling.length === 0) value = shortHtml(JSON.stringify(d), 80);
      else {
        parts.push(
          ...telling.map((f) => {
            const x = d[f];
            const text =
              f === "commit" && typeof x === "string"
                ? `<code title="${escapeHtml(x)}">${escapeHtml(x.slice(0, 12))}</code>`
                : shortHtml(typeof x === "string" ? x : JSON.stringify(x), 80);
            return `<span class="kv"><b>${f}</b> ${text}</span>`;
          }),
        );
        continue;
      }
    } else if (typeof v === "string") value = shortHtml(v, 100);
    else if (typeof v === "object") value = shortHtml(plainText(v), 100);
    else value = escapeHtml(String(v));
    parts.push(`<span class="kv"><b>${escapeHtml(k)}</b> ${value}</span>`);
  }
  return parts.join("");
}
