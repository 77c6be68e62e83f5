/**
 * The JSON the GitHub stand-in answers, shaped as GitHub's description requires (every required
 * field of `simple-user`, `repository`, `pull-request`, `issue`, `issue-comment`, ...), with URLs
 * under the stand-in's own address: `api` for API URLs, `html` for web ones.
 */
import type { CommentRecord, ItemRecord, RepoRecord, UserRecord } from "./github-state.js";

/** The stand-in's two bases: `api` (with a GHES-like `/api/v3` when configured) and `html`. */
export interface Bases {
  api: string;
  html: string;
}

type Json = Record<string, unknown>;

/** GitHub's timestamp form: ISO 8601 to the second, `Z`. */
export const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const nodeId = (prefix: string, id: number) =>
  `${prefix}_${Buffer.from(`${prefix}${id}`).toString("base64").replace(/=+$/, "")}`;

export function userJson(b: Bases, u: UserRecord): Json {
  const api = `${b.api}/users/${encodeURIComponent(u.login)}`;
  const bot = u.type === "Bot";
  return {
    login: u.login,
    id: u.id,
    node_id: nodeId("U", u.id),
    avatar_url: `${b.html}/avatars/u/${u.id}?v=4`,
    gravatar_id: "",
    url: api,
    html_url: bot ? `${b.html}/apps/${u.login.replace(/\[bot\]$/i, "")}` : `${b.html}/${u.login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: u.type,
    user_view_type: "public",
    site_admin: false,
  };
}

export function privateUserJson(b: Bases, u: UserRecord, createdAt: number): Json {
  return {
    ...userJson(b, u),
    user_view_type: "private",
    name: u.login,
    company: null,
    blog: "",
    location: null,
    email: null,
    hireable: null,
    bio: null,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: iso(createdAt),
    updated_at: iso(createdAt),
    private_gists: 0,
    total_private_repos: 0,
    owned_private_repos: 0,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: true,
  };
}

export function repoJson(b: Bases, r: RepoRecord): Json {
  const full = `${r.owner.login}/${r.name}`;
  const api = `${b.api}/repos/${full}`;
  const html = `${b.html}/${full}`;
  const open = [...r.items.values()].filter((i) => i.state === "open").length;
  return {
    id: r.id,
    node_id: nodeId("R", r.id),
    name: r.name,
    full_name: full,
    license: null,
    forks: 0,
    permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
    owner: userJson(b, r.owner),
    private: true,
    html_url: html,
    description: null,
    fork: false,
    url: api,
    archive_url: `${api}/{archive_format}{/ref}`,
    assignees_url: `${api}/assignees{/user}`,
    blobs_url: `${api}/git/blobs{/sha}`,
    branches_url: `${api}/branches{/branch}`,
    collaborators_url: `${api}/collaborators{/collaborator}`,
    comments_url: `${api}/comments{/number}`,
    commits_url: `${api}/commits{/sha}`,
    compare_url: `${api}/compare/{base}...{head}`,
    contents_url: `${api}/contents/{+path}`,
    contributors_url: `${api}/contributors`,
    deployments_url: `${api}/deployments`,
    downloads_url: `${api}/downloads`,
    events_url: `${api}/events`,
    forks_url: `${api}/forks`,
    git_commits_url: `${api}/git/commits{/sha}`,
    git_refs_url: `${api}/git/refs{/sha}`,
    git_tags_url: `${api}/git/tags{/sha}`,
    git_url: `${html.replace(/^https?:/, "git:")}.git`,
    issue_comment_url: `${api}/issues/comments{/number}`,
    issue_events_url: `${api}/issues/events{/number}`,
    issues_url: `${api}/issues{/number}`,
    keys_url: `${api}/keys{/key_id}`,
    labels_url: `${api}/labels{/name}`,
    languages_url: `${api}/languages`,
    merges_url: `${api}/merges`,
    milestones_url: `${api}/milestones{/number}`,
    notifications_url: `${api}/notifications{?since,all,participating}`,
    pulls_url: `${api}/pulls{/number}`,
    releases_url: `${api}/releases{/id}`,
    ssh_url: `git@stand-in:${full}.git`,
    stargazers_url: `${api}/stargazers`,
    statuses_url: `${api}/statuses/{sha}`,
    subscribers_url: `${api}/subscribers`,
    subscription_url: `${api}/subscription`,
    tags_url: `${api}/tags`,
    teams_url: `${api}/teams`,
    trees_url: `${api}/git/trees{/sha}`,
    clone_url: `${html}.git`,
    mirror_url: null,
    hooks_url: `${api}/hooks`,
    svn_url: html,
    homepage: null,
    language: null,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    size: 0,
    default_branch: r.defaultBranch,
    open_issues_count: open,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: "private",
    pushed_at: iso(r.createdAt),
    created_at: iso(r.createdAt),
    updated_at: iso(r.createdAt),
    allow_forking: false,
    web_commit_signoff_required: false,
    open_issues: open,
    watchers: 0,
  };
}

export function fullRepoJson(b: Bases, r: RepoRecord): Json {
  return { ...repoJson(b, r), subscribers_count: 0, network_count: 0 };
}

function labelsJson(b: Bases, r: RepoRecord, labels: string[]): Json[] {
  return labels.map((name, i) => ({
    id: r.id * 100 + i,
    node_id: nodeId("LA", r.id * 100 + i),
    url: `${b.api}/repos/${r.owner.login}/${r.name}/labels/${encodeURIComponent(name)}`,
    name,
    description: null,
    color: "ededed",
    default: false,
  }));
}

const reactions = (url: string) => ({
  url,
  total_count: 0,
  "+1": 0,
  "-1": 0,
  laugh: 0,
  confused: 0,
  heart: 0,
  hooray: 0,
  eyes: 0,
  rocket: 0,
});

/** The issue representation (also of a pull request, with its `pull_request` links). */
export function issueJson(b: Bases, r: RepoRecord, i: ItemRecord): Json {
  const full = `${r.owner.login}/${r.name}`;
  const url = `${b.api}/repos/${full}/issues/${i.number}`;
  const html = `${b.html}/${full}/${i.pull ? "pull" : "issues"}/${i.number}`;
  const out: Json = {
    url,
    repository_url: `${b.api}/repos/${full}`,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: html,
    id: i.id,
    node_id: nodeId(i.pull ? "PR" : "I", i.id),
    number: i.number,
    title: i.title,
    user: userJson(b, i.user),
    labels: labelsJson(b, r, i.labels),
    state: i.state,
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments: i.comments,
    created_at: iso(i.createdAt),
    updated_at: iso(i.updatedAt),
    closed_at: isoOrNull(i.closedAt),
    author_association: "OWNER",
    active_lock_reason: null,
    body: i.body,
    reactions: reactions(`${url}/reactions`),
    timeline_url: `${url}/timeline`,
    performed_via_github_app: null,
    state_reason: i.state === "closed" ? "completed" : null,
  };
  if (i.pull) {
    const pr = `${b.api}/repos/${full}/pulls/${i.number}`;
    out.draft = i.pull.draft;
    out.pull_request = {
      url: pr,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      merged_at: null,
    };
  }
  return out;
}

/** A pull request: `simple` for the list endpoint, the full one for create and get. */
export function pullJson(b: Bases, r: RepoRecord, i: ItemRecord, simple: boolean): Json {
  const p = i.pull;
  if (!p) throw new Error(`#${i.number} is an issue, not a pull request`);
  const full = `${r.owner.login}/${r.name}`;
  const url = `${b.api}/repos/${full}/pulls/${i.number}`;
  const html = `${b.html}/${full}/pull/${i.number}`;
  const issue = `${b.api}/repos/${full}/issues/${i.number}`;
  const repo = repoJson(b, r);
  const owner = userJson(b, r.owner);
  const side = (ref: string, sha: string) => ({
    label: `${r.owner.login}:${ref}`,
    ref,
    sha,
    user: owner,
    repo,
  });
  const out: Json = {
    url,
    id: i.id,
    node_id: nodeId("PR", i.id),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issue,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${b.api}/repos/${full}/pulls/comments{/number}`,
    comments_url: `${issue}/comments`,
    statuses_url: `${b.api}/repos/${full}/statuses/${p.headSha}`,
    number: i.number,
    state: i.state,
    locked: false,
    title: i.title,
    user: userJson(b, i.user),
    body: i.body,
    labels: labelsJson(b, r, i.labels),
    milestone: null,
    active_lock_reason: null,
    created_at: iso(i.createdAt),
    updated_at: iso(i.updatedAt),
    closed_at: isoOrNull(i.closedAt),
    merged_at: null,
    merge_commit_sha: null,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
    head: side(p.headRef, p.headSha),
    base: side(p.baseRef, p.baseSha),
    _links: {
      self: { href: url },
      html: { href: html },
      issue: { href: issue },
      comments: { href: `${issue}/comments` },
      review_comments: { href: `${url}/comments` },
      review_comment: { href: `${b.api}/repos/${full}/pulls/comments{/number}` },
      commits: { href: `${url}/commits` },
      statuses: { href: `${b.api}/repos/${full}/statuses/${p.headSha}` },
    },
    author_association: "OWNER",
    auto_merge: null,
    draft: p.draft,
  };
  if (simple) return out;
  return {
    ...out,
    merged: false,
    mergeable: null,
    rebaseable: null,
    mergeable_state: "unknown",
    merged_by: null,
    comments: i.comments,
    review_comments: 0,
    maintainer_can_modify: p.maintainerCanModify,
    commits: 1,
    additions: 0,
    deletions: 0,
    changed_files: 0,
  };
}

export function commentJson(b: Bases, r: RepoRecord, c: CommentRecord): Json {
  const full = `${r.owner.login}/${r.name}`;
  const item = r.items.get(c.issueNumber);
  const url = `${b.api}/repos/${full}/issues/comments/${c.id}`;
  return {
    id: c.id,
    node_id: nodeId("IC", c.id),
    url,
    html_url: `${b.html}/${full}/${item?.pull ? "pull" : "issues"}/${c.issueNumber}#issuecomment-${c.id}`,
    body: c.body,
    user: userJson(b, c.user),
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
    issue_url: `${b.api}/repos/${full}/issues/${c.issueNumber}`,
    author_association: "OWNER",
    performed_via_github_app: null,
    reactions: reactions(`${url}/reactions`),
  };
}

export function refJson(b: Bases, r: RepoRecord, branch: string, sha: string): Json {
  const api = `${b.api}/repos/${r.owner.login}/${r.name}/git`;
  return {
    ref: `refs/heads/${branch}`,
    node_id: nodeId("REF", r.id),
    url: `${api}/refs/heads/${branch}`,
    object: { type: "commit", sha, url: `${api}/commits/${sha}` },
  };
}
