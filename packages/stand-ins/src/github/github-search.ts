/**
 * `GET /search/issues` with an index that lags: an issue or pull request is found only
 * `searchLagMs` after it was created, and a comment's text only that long after the comment, as
 * GitHub's search index trails its writes by seconds to minutes. This is why the effect kinds
 * probe with the list endpoints and never with search: a search right after a create answers
 * "not there".
 *
 * The query language is the part a probe could use: free words and "quoted phrases" matched
 * case-insensitively in the title, body and comments (or those `in:` names), and the qualifiers
 * `repo:`, `user:`/`org:`, `is:`/`type:` (issue, pr, pull-request, open, closed), `state:`,
 * `author:` and `label:`. Other qualifiers are taken as words, as GitHub does with unknown ones.
 */
import { errorAnswer, paginate, type RouteAnswer } from "./github-answers.js";
import { issueJson } from "./github-json.js";
import type { RouteContext } from "./github-routes.js";
import type { ItemRecord, RepoRecord } from "./github-state.js";

interface Query {
  words: string[];
  repo?: string;
  owner?: string;
  kind?: "issue" | "pr";
  state?: "open" | "closed";
  author?: string;
  labels: string[];
  fields: Set<"title" | "body" | "comments">;
}

function parse(q: string): Query {
  const out: Query = { words: [], labels: [], fields: new Set() };
  for (const m of q.matchAll(/(\w[\w-]*):("[^"]*"|\S+)|"([^"]*)"|(\S+)/g)) {
    const [, name, rawValue, phrase, word] = m;
    if (phrase !== undefined) {
      out.words.push(phrase.toLowerCase());
      continue;
    }
    if (word !== undefined) {
      out.words.push(word.toLowerCase());
      continue;
    }
    const value = (rawValue ?? "").replace(/^"|"$/g, "");
    const v = value.toLowerCase();
    switch (name?.toLowerCase()) {
      case "repo":
        out.repo = v;
        break;
      case "user":
      case "org":
        out.owner = v;
        break;
      case "is":
      case "type":
        if (v === "issue") out.kind = "issue";
        else if (v === "pr" || v === "pull-request") out.kind = "pr";
        else if (v === "open" || v === "closed") out.state = v;
        break;
      case "state":
        if (v === "open" || v === "closed") out.state = v;
        break;
      case "author":
        out.author = v;
        break;
      case "label":
        out.labels.push(value);
        break;
      case "in":
        for (const f of v.split(","))
          if (f === "title" || f === "body" || f === "comments") out.fields.add(f);
        break;
      default:
        out.words.push(m[0].toLowerCase());
    }
  }
  if (out.fields.size === 0)
    for (const f of ["title", "body", "comments"] as const) out.fields.add(f);
  return out;
}

/** GitHub's limit on `q`. */
const MAX_QUERY = 256;

export function searchIssues(c: RouteContext): RouteAnswer {
  const raw = String(c.query.q ?? "");
  if (raw.length > MAX_QUERY)
    return {
      status: 422,
      body: {
        message: "Validation Failed",
        errors: [
          {
            message: `The search is longer than ${MAX_QUERY} characters.`,
            resource: "Search",
            field: "q",
            code: "invalid",
          },
        ],
        documentation_url: c.docs,
        status: "422",
      },
    };
  const q = parse(raw);
  const now = c.now();
  const indexed = (changedAt: number) => now - changedAt >= c.searchLagMs;
  const hits: { repo: RepoRecord; item: ItemRecord }[] = [];
  for (const repo of c.state.repos.values()) {
    const full = `${repo.owner.login}/${repo.name}`.toLowerCase();
    if (q.repo && q.repo !== full) continue;
    if (q.owner && q.owner !== repo.owner.login.toLowerCase()) continue;
    for (const item of repo.items.values()) {
      if (!indexed(item.changedAt)) continue;
      if (q.kind && (q.kind === "pr") !== Boolean(item.pull)) continue;
      if (q.state && q.state !== item.state) continue;
      if (q.author && q.author !== item.user.login.toLowerCase()) continue;
      if (!q.labels.every((l) => item.labels.includes(l))) continue;
      const text = [
        q.fields.has("title") ? item.title : "",
        q.fields.has("body") ? (item.body ?? "") : "",
        ...(q.fields.has("comments")
          ? repo.comments
              .filter((x) => x.issueNumber === item.number && indexed(x.changedAt))
              .map((x) => x.body)
          : []),
      ]
        .join("\n")
        .toLowerCase();
      if (q.words.every((w) => text.includes(w))) hits.push({ repo, item });
    }
  }
  const sort = c.query.sort;
  const sign = c.query.order === "asc" && sort !== undefined ? 1 : -1;
  const key = (h: { item: ItemRecord }) =>
    sort === "updated"
      ? h.item.updatedAt
      : sort === "comments"
        ? h.item.comments
        : h.item.createdAt;
  hits.sort((a, b) => sign * (key(a) - key(b) || a.item.id - b.item.id));
  if (hits.length > 1000) hits.length = 1000;
  if (c.query.search_type !== undefined && c.query.search_type !== "lexical")
    return errorAnswer(422, "The stand-in searches lexically only.", c.docs);
  const { items, link } = paginate(hits, c.query, c.linkBase());
  const body = {
    total_count: hits.length,
    incomplete_results: false,
    items: items.map((h) => ({ ...issueJson(c.bases, h.repo, h.item), score: 1 })),
    search_type: "lexical",
  };
  return link ? { status: 200, body, headers: { link } } : { status: 200, body };
}
