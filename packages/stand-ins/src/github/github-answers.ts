/**
 * The shapes of the GitHub stand-in's answers: GitHub's error bodies (`basic-error`, and
 * `validation-error` for 422 "Validation Failed") and pagination with a `Link` header formatted as
 * GitHub formats it.
 */

/** What a create changed, for the counters and the fault knobs. */
export interface GitHubCreate {
  kind: "pull_request" | "issue" | "comment" | "ref";
  owner: string;
  repo: string;
  /** The issue or pull request number (for a comment: the one commented on). */
  number?: number;
  /** The comment's id. */
  id?: number;
  /** The request's JSON body, as received. */
  body: Record<string, unknown>;
}

/** A route's answer, before the stand-in checks it, counts it and sends it (or drops it). */
export interface RouteAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  created?: GitHubCreate;
  /** Problems GitHub lets pass that the route noticed (a `head` filter it ignores). */
  ignored?: string[];
}

/** GitHub's documentation root, as in its error bodies' `documentation_url`. */
export const DOCS = "https://docs.github.com/rest";

/** A `basic-error` answer: `{message, documentation_url, status}` (status as a string, as GitHub). */
export function errorAnswer(status: number, message: string, docs = DOCS): RouteAnswer {
  return { status, body: { message, documentation_url: docs, status: String(status) } };
}

/** One entry of a 422 "Validation Failed" answer's `errors`. */
export interface ValidationEntry {
  resource: string;
  code: string;
  field?: string;
  message?: string;
}

/** A 422 "Validation Failed" answer with GitHub's `errors` list. */
export function validationFailed(entries: ValidationEntry[], docs = DOCS): RouteAnswer {
  return {
    status: 422,
    body: {
      message: "Validation Failed",
      errors: entries,
      documentation_url: docs,
      status: "422",
    },
  };
}

/** The page size and number a list reads: `per_page` 30 by default, at most 100. */
export function pageOf(query: Record<string, unknown>): { perPage: number; page: number } {
  const per = typeof query.per_page === "number" ? Math.trunc(query.per_page) : 30;
  const page = typeof query.page === "number" ? Math.trunc(query.page) : 1;
  return { perPage: per < 1 ? 30 : Math.min(per, 100), page: Math.max(page, 1) };
}

/**
 * Cuts `items` to the requested page and makes GitHub's `Link` header for it: the request's own
 * query kept, `page` set, with `rel="prev"`, `"next"`, `"last"` and `"first"` in GitHub's order,
 * each given only where it applies, and no header at all when everything fits on one page.
 * `linkBase` is the URL the links point at (GitHub points repository lists at
 * `/repositories/{id}/...`, not at the path the client asked for).
 */
export function paginate<T>(
  items: readonly T[],
  query: Record<string, unknown>,
  linkBase: URL,
): { items: T[]; link?: string } {
  const { perPage, page } = pageOf(query);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  if (last === 1 && page === 1) return { items: slice };
  const at = (n: number) => {
    const u = new URL(linkBase);
    const params = new URLSearchParams(u.search);
    params.delete("page");
    params.append("page", String(n));
    u.search = params.toString();
    return u.toString();
  };
  const parts: string[] = [];
  if (page > 1) parts.push(`<${at(page - 1)}>; rel="prev"`);
  if (page < last) parts.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
  if (page > 1) parts.push(`<${at(1)}>; rel="first"`);
  return parts.length > 0 ? { items: slice, link: parts.join(", ") } : { items: slice };
}

/** Sorts by `key` then by id (GitHub's order among equal keys), in `direction`. */
export function sortBy<T extends { id: number }>(
  items: T[],
  key: (t: T) => number,
  direction: "asc" | "desc",
): T[] {
  const sign = direction === "asc" ? 1 : -1;
  return items.sort((a, b) => sign * (key(a) - key(b) || a.id - b.id));
}
