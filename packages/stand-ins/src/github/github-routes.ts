/**
 * The GitHub stand-in's operations on repositories, pull requests, issues, issue comments and
 * branch refs, with GitHub's own rules: a pull request's `head` and `base` must exist, one open
 * pull request per head and base (422 "A pull request already exists for owner:branch."), bodies
 * of at most 65,536 characters, lists filtered, sorted and paginated as documented.
 */
import {
  errorAnswer,
  type GitHubCreate,
  paginate,
  type RouteAnswer,
  sortBy,
  validationFailed,
} from "./github-answers.js";
import type { AppRecord, GitHubAuth, TokenRecord } from "./github-apps.js";
import {
  type Bases,
  commentJson,
  fullRepoJson,
  issueJson,
  privateUserJson,
  pullJson,
  refJson,
} from "./github-json.js";
import type { GitHubState, ItemRecord, RepoRecord, UserRecord } from "./github-state.js";

/** What a route reads: the checked request, the state and where links point. */
export interface RouteContext {
  state: GitHubState;
  bases: Bases;
  user: UserRecord;
  now: () => number;
  path: Record<string, string | number>;
  query: Record<string, string | number | boolean>;
  body: Record<string, unknown>;
  /** The request's URL as a `Link` header points at it (`/repositories/{id}/...` for a repo). */
  linkBase(repo?: RepoRecord): URL;
  /** The operation's documentation URL, for error bodies. */
  docs: string;
  /** How long a change takes to reach the search index (ms). */
  searchLagMs: number;
  /** How long a create takes to show in the list endpoints (ms). */
  listLagMs: number;
  /** How long a push takes to reach the pull requests API (ms). */
  pushLagMs: number;
  auth: GitHubAuth;
  /** The token the request came with (undefined for an App's JWT). */
  token: TokenRecord | undefined;
  /** The App whose JWT the request came with. */
  app: AppRecord | undefined;
}

/**
 * Whether a list shows a record made through the API at `madeAt` (ms): only `listLagMs` later, as
 * GitHub's lists, served from replicas, show a write a moment after it ("read-after-write lag").
 */
const listed = (c: RouteContext, madeAt: number | undefined) =>
  madeAt === undefined || madeAt + c.listLagMs <= c.now();

export type Route = (c: RouteContext) => RouteAnswer;

/** GitHub's limit on an issue, pull request or comment body. */
export const MAX_BODY = 65_536;

const json = (status: number, body: unknown, headers?: Record<string, string>): RouteAnswer =>
  headers ? { status, body, headers } : { status, body };

function withRepo(c: RouteContext, then: (repo: RepoRecord) => RouteAnswer): RouteAnswer {
  const repo = c.state.repo(String(c.path.owner), String(c.path.repo));
  return repo ? then(repo) : errorAnswer(404, "Not Found", c.docs);
}

function withItem(
  c: RouteContext,
  repo: RepoRecord,
  number: unknown,
  then: (item: ItemRecord) => RouteAnswer,
): RouteAnswer {
  const item = repo.items.get(Number(number));
  return item ? then(item) : errorAnswer(404, "Not Found", c.docs);
}

function paged<T>(c: RouteContext, repo: RepoRecord, items: T[], toJson: (t: T) => unknown) {
  const { items: page, link } = paginate(items, c.query, c.linkBase(repo));
  return json(200, page.map(toJson), link ? { link } : undefined);
}

const tooLong = (resource: string): RouteAnswer =>
  validationFailed([
    {
      resource,
      code: "custom",
      field: "body",
      message: `body is too long (maximum is ${MAX_BODY} characters)`,
    },
  ]);

function created(
  c: RouteContext,
  repo: RepoRecord,
  kind: GitHubCreate["kind"],
  body: unknown,
  location: string,
  extra: { number?: number; id?: number } = {},
): RouteAnswer {
  return {
    status: 201,
    body,
    headers: { location },
    created: { kind, owner: repo.owner.login, repo: repo.name, ...extra, body: c.body },
  };
}

function listPulls(c: RouteContext): RouteAnswer {
  return withRepo(c, (repo) => {
    const state = String(c.query.state ?? "open");
    const ignored: string[] = [];
    let head: { owner: string; ref: string } | undefined;
    if (typeof c.query.head === "string") {
      const i = c.query.head.indexOf(":");
      if (i > 0) head = { owner: c.query.head.slice(0, i), ref: c.query.head.slice(i + 1) };
      else
        ignored.push(
          `head=${c.query.head} is not user:ref-name: GitHub ignores the filter and lists every pull request`,
        );
    }
    const pulls = [...repo.items.values()].filter(
      (i) =>
        i.pull &&
        listed(c, i.apiAt) &&
        (state === "all" || i.state === state) &&
        (!head ||
          (head.owner.toLowerCase() === repo.owner.login.toLowerCase() &&
            head.ref === i.pull.headRef)) &&
        (c.query.base === undefined || i.pull.baseRef === c.query.base),
    );
    const sort = String(c.query.sort ?? "created");
    const direction =
      (c.query.direction as "asc" | "desc" | undefined) ?? (sort === "created" ? "desc" : "asc");
    const key = (i: ItemRecord) =>
      sort === "updated" ? i.updatedAt : sort === "popularity" ? i.comments : i.createdAt;
    const answer = paged(c, repo, sortBy(pulls, key, direction), (i) =>
      pullJson(c.bases, repo, i, true),
    );
    return { ...answer, ignored };
  });
}

function createPull(c: RouteContext): RouteAnswer {
  return withRepo(c, (repo) => {
    const b = c.body;
    if (b.issue !== undefined)
      return validationFailed(
        [
          {
            resource: "PullRequest",
            code: "custom",
            field: "issue",
            message: "the stand-in does not turn issues into pull requests",
          },
        ],
        c.docs,
      );
    if (typeof b.title !== "string" || b.title.trim() === "")
      return validationFailed(
        [{ resource: "PullRequest", code: "missing_field", field: "title" }],
        c.docs,
      );
    if (typeof b.body === "string" && b.body.length > MAX_BODY) return tooLong("PullRequest");
    const rawHead = String(b.head);
    const colon = rawHead.indexOf(":");
    const headOwner = colon > 0 ? rawHead.slice(0, colon) : repo.owner.login;
    const headRef = colon > 0 ? rawHead.slice(colon + 1) : rawHead;
    const baseRef = String(b.base);
    // The head as the pull requests API sees it: a push shows there pushLagMs later.
    const headSha =
      headOwner.toLowerCase() === repo.owner.login.toLowerCase()
        ? c.state.visibleSha(repo, headRef, c.pushLagMs)
        : undefined;
    const baseSha = c.state.branchSha(repo, baseRef);
    const invalid = [
      ...(headSha ? [] : [{ resource: "PullRequest", field: "head", code: "invalid" }]),
      ...(baseSha ? [] : [{ resource: "PullRequest", field: "base", code: "invalid" }]),
    ];
    if (invalid.length > 0 || !headSha || !baseSha) return validationFailed(invalid, c.docs);
    const label = `${repo.owner.login}:${headRef}`;
    const open = [...repo.items.values()].some(
      (i) =>
        i.pull && i.state === "open" && i.pull.headRef === headRef && i.pull.baseRef === baseRef,
    );
    if (open)
      return validationFailed(
        [
          {
            resource: "PullRequest",
            code: "custom",
            message: `A pull request already exists for ${label}.`,
          },
        ],
        c.docs,
      );
    if (headSha === baseSha)
      return validationFailed(
        [
          {
            resource: "PullRequest",
            code: "custom",
            message: `No commits between ${baseRef} and ${headRef}`,
          },
        ],
        c.docs,
      );
    const item = c.state.addItem(repo, {
      title: b.title,
      body: typeof b.body === "string" ? b.body : null,
      user: c.user,
      apiAt: c.now(),
      pull: {
        headRef,
        headSha,
        baseRef,
        baseSha,
        draft: b.draft === true,
        maintainerCanModify: b.maintainer_can_modify !== false,
      },
    });
    const out = pullJson(c.bases, repo, item, false);
    return created(c, repo, "pull_request", out, String(out.url), { number: item.number });
  });
}

function listIssues(c: RouteContext): RouteAnswer {
  return withRepo(c, (repo) => {
    const q = c.query;
    const state = String(q.state ?? "open");
    const since = typeof q.since === "string" ? Date.parse(q.since) : undefined;
    const labels =
      typeof q.labels === "string" ? q.labels.split(",").filter((l) => l.length > 0) : [];
    // No issue here has an assignee, a milestone or a type: "none" matches all, anything else none.
    const unset = (v: unknown) => v === undefined || v === "none";
    const items = [...repo.items.values()].filter(
      (i) =>
        listed(c, i.apiAt) &&
        (state === "all" || i.state === state) &&
        (q.creator === undefined ||
          i.user.login.toLowerCase() === String(q.creator).toLowerCase()) &&
        (since === undefined || i.updatedAt >= since) &&
        labels.every((l) => i.labels.includes(l)) &&
        unset(q.assignee) &&
        unset(q.milestone) &&
        unset(q.type) &&
        q.mentioned === undefined,
    );
    const sort = String(q.sort ?? "created");
    const key = (i: ItemRecord) =>
      sort === "updated" ? i.updatedAt : sort === "comments" ? i.comments : i.createdAt;
    const direction = (q.direction as "asc" | "desc" | undefined) ?? "desc";
    return paged(c, repo, sortBy(items, key, direction), (i) => issueJson(c.bases, repo, i));
  });
}

function createIssue(c: RouteContext): RouteAnswer {
  return withRepo(c, (repo) => {
    const b = c.body;
    const title = String(b.title);
    if (title.trim() === "")
      return validationFailed([{ resource: "Issue", code: "missing_field", field: "title" }]);
    if (typeof b.body === "string" && b.body.length > MAX_BODY) return tooLong("Issue");
    const labels = Array.isArray(b.labels)
      ? b.labels.map((l) =>
          typeof l === "object" && l ? String((l as { name?: unknown }).name) : String(l),
        )
      : [];
    const item = c.state.addItem(repo, {
      title,
      body: typeof b.body === "string" ? b.body : null,
      user: c.user,
      labels,
      apiAt: c.now(),
    });
    const out = issueJson(c.bases, repo, item);
    return created(c, repo, "issue", out, String(out.url), { number: item.number });
  });
}

function listComments(c: RouteContext): RouteAnswer {
  return withRepo(c, (repo) =>
    withItem(c, repo, c.path.issue_number, (item) => {
      const since = typeof c.query.since === "string" ? Date.parse(c.query.since) : undefined;
      const list = repo.comments.filter(
        (x) =>
          x.issueNumber === item.number &&
          listed(c, x.apiAt) &&
          (since === undefined || x.updatedAt >= since),
      );
      return paged(
        c,
        repo,
        sortBy(list, (x) => x.id, "asc"),
        (x) => commentJson(c.bases, repo, x),
      );
    }),
  );
}

function createComment(c: RouteContext): RouteAnswer {
  return withRepo(c, (repo) =>
    withItem(c, repo, c.path.issue_number, (item) => {
      const body = String(c.body.body);
      if (body.length > MAX_BODY) return tooLong("IssueComment");
      if (body.trim() === "")
        return validationFailed([
          { resource: "IssueComment", code: "missing_field", field: "body" },
        ]);
      const comment = c.state.addComment(repo, item, { body, user: c.user, apiAt: c.now() });
      const out = commentJson(c.bases, repo, comment);
      return created(c, repo, "comment", out, String(out.url), {
        number: item.number,
        id: comment.id,
      });
    }),
  );
}

function createRef(c: RouteContext): RouteAnswer {
  return withRepo(c, (repo) => {
    const ref = String(c.body.ref);
    const sha = String(c.body.sha);
    if (!/^refs\/[^/]+\/.+/.test(ref))
      return errorAnswer(
        422,
        "Reference name must start with 'refs/' and have at least two slashes.",
        c.docs,
      );
    if (!ref.startsWith("refs/heads/"))
      return errorAnswer(422, "The stand-in keeps branches (refs/heads/*) only.", c.docs);
    const branch = ref.slice("refs/heads/".length);
    if (c.state.branchSha(repo, branch) !== undefined)
      return errorAnswer(422, "Reference already exists", c.docs);
    if (!c.state.hasCommit(repo, sha)) return errorAnswer(422, "Object does not exist", c.docs);
    c.state.setBranch(repo, branch, sha);
    const out = refJson(c.bases, repo, branch, sha);
    return created(c, repo, "ref", out, String(out.url));
  });
}

function getRef(c: RouteContext): RouteAnswer {
  return withRepo(c, (repo) => {
    const ref = String(c.path.ref);
    const sha = ref.startsWith("heads/")
      ? c.state.branchSha(repo, ref.slice("heads/".length))
      : undefined;
    return sha
      ? json(200, refJson(c.bases, repo, ref.slice("heads/".length), sha))
      : errorAnswer(404, "Not Found", c.docs);
  });
}

/**
 * The operations of this file, by `method template` (search, rate_limit and the App's are
 * elsewhere).
 */
export const ROUTES: Record<string, Route> = {
  // An installation token acts as the App's bot, which has no "authenticated user".
  "get /user": (c) =>
    c.token?.kind === "installation"
      ? errorAnswer(403, "Resource not accessible by integration", c.docs)
      : json(200, privateUserJson(c.bases, c.user, 1_262_304_000_000)),
  "get /repos/{owner}/{repo}": (c) => withRepo(c, (repo) => json(200, fullRepoJson(c.bases, repo))),
  "get /repos/{owner}/{repo}/pulls": listPulls,
  "post /repos/{owner}/{repo}/pulls": createPull,
  "get /repos/{owner}/{repo}/pulls/{pull_number}": (c) =>
    withRepo(c, (repo) =>
      withItem(c, repo, c.path.pull_number, (item) =>
        item.pull
          ? json(200, pullJson(c.bases, repo, item, false))
          : errorAnswer(404, "Not Found", c.docs),
      ),
    ),
  "get /repos/{owner}/{repo}/issues": listIssues,
  "post /repos/{owner}/{repo}/issues": createIssue,
  "get /repos/{owner}/{repo}/issues/{issue_number}": (c) =>
    withRepo(c, (repo) =>
      withItem(c, repo, c.path.issue_number, (item) => json(200, issueJson(c.bases, repo, item))),
    ),
  "get /repos/{owner}/{repo}/issues/{issue_number}/comments": listComments,
  "post /repos/{owner}/{repo}/issues/{issue_number}/comments": createComment,
  "post /repos/{owner}/{repo}/git/refs": createRef,
  "get /repos/{owner}/{repo}/git/ref/{ref}": getRef,
};
