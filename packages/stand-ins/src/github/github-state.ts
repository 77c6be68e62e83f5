/**
 * The GitHub stand-in's memory: users, repositories with their branches, issues and pull requests
 * (one number sequence per repository, as on GitHub: a pull request is an issue too) and issue
 * comments. Timestamps are kept to the second, as GitHub's API shows them, so a `since` with
 * milliseconds behaves as it does there; each record also keeps the exact time of its last change
 * for the search index's lag.
 */
import { execFileSync } from "node:child_process";

/** A GitHub account the stand-in knows (the owner of a repository or a token's user). */
export interface UserRecord {
  id: number;
  login: string;
  /** `Bot` for an App's bot (`<slug>[bot]`), else `User`. */
  type: "User" | "Bot";
}

/** A pull request's own part of an issue record. */
export interface PullPart {
  headRef: string;
  headSha: string;
  baseRef: string;
  baseSha: string;
  draft: boolean;
  maintainerCanModify: boolean;
}

/** An issue, or a pull request when `pull` is set. Times in ms, whole seconds. */
export interface ItemRecord {
  id: number;
  number: number;
  title: string;
  body: string | null;
  user: UserRecord;
  state: "open" | "closed";
  labels: string[];
  comments: number;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
  /** The exact time (ms) it was written, which the search index sees `searchLagMs` later. */
  changedAt: number;
  /** When it was made through the API (ms), which the lists show `listLagMs` later. */
  apiAt?: number;
  pull?: PullPart;
}

/** An issue comment (on an issue or a pull request). */
export interface CommentRecord {
  id: number;
  issueNumber: number;
  body: string;
  user: UserRecord;
  createdAt: number;
  updatedAt: number;
  changedAt: number;
  /** When it was made through the API (ms), which the lists show `listLagMs` later. */
  apiAt?: number;
}

/** A repository and everything in it. */
export interface RepoRecord {
  id: number;
  owner: UserRecord;
  name: string;
  defaultBranch: string;
  /** Branch name -> commit SHA, for repositories without `gitDir`. */
  branches: Map<string, string>;
  /** A bare git repository whose `refs/heads/*` are this repository's branches. */
  gitDir?: string;
  /** Branches that exist as soon as they are asked for, each with a commit of its own. */
  pushedOnDemand?: (name: string) => boolean;
  createdAt: number;
  items: Map<number, ItemRecord>;
  comments: CommentRecord[];
  nextNumber: number;
}

const SHA = /^[0-9a-f]{40}$/;

/** A SHA-1 made from `seed`, for branches registered without one. */
export function fakeSha(seed: string): string {
  let h = 2166136261;
  let out = "";
  for (let round = 0; out.length < 40; round++) {
    for (const c of `${seed}:${round}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    out += h.toString(16).padStart(8, "0");
  }
  return out.slice(0, 40);
}

const seconds = (ms: number) => Math.floor(ms / 1000) * 1000;

/** The stand-in's state; every method is synchronous, so one request's change is atomic. */
export class GitHubState {
  readonly users = new Map<string, UserRecord>();
  readonly repos = new Map<string, RepoRecord>();
  /**
   * When each branch last moved as the stand-in saw it (`<repo id>:<branch>`), and what it was
   * before, for the push lag; a branch there from the start moved "long ago".
   */
  private readonly moves = new Map<
    string,
    { sha: string | undefined; at: number; before: string | undefined }
  >();
  private nextId = { user: 583231, repo: 1296269, item: 1347000001, comment: 1400000001 };

  constructor(private readonly now: () => number) {}

  /** The user `login` (case-insensitive, as GitHub's logins), made on first use. */
  user(login: string): UserRecord {
    const key = login.toLowerCase();
    let u = this.users.get(key);
    if (!u) {
      u = { id: this.nextId.user++, login, type: /\[bot\]$/i.test(login) ? "Bot" : "User" };
      this.users.set(key, u);
    }
    return u;
  }

  /** The repository `owner/name` (case-insensitive), or undefined. */
  repo(owner: string, name: string): RepoRecord | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  /** The repository with this id (the `/repositories/{id}` paths of `Link` headers). */
  repoById(id: number): RepoRecord | undefined {
    for (const r of this.repos.values()) if (r.id === id) return r;
    return undefined;
  }

  createRepo(options: {
    owner: string;
    name: string;
    defaultBranch?: string;
    branches?: Record<string, string | undefined> | string[];
    gitDir?: string;
    pushedOnDemand?: (name: string) => boolean;
  }): RepoRecord {
    const key = `${options.owner}/${options.name}`.toLowerCase();
    if (this.repos.has(key)) throw new Error(`the repository ${key} exists already`);
    const repo: RepoRecord = {
      id: this.nextId.repo++,
      owner: this.user(options.owner),
      name: options.name,
      defaultBranch: options.defaultBranch ?? "main",
      branches: new Map(),
      createdAt: seconds(this.now()),
      items: new Map(),
      comments: [],
      nextNumber: 1,
    };
    if (options.gitDir) repo.gitDir = options.gitDir;
    if (options.pushedOnDemand) repo.pushedOnDemand = options.pushedOnDemand;
    const branches = Array.isArray(options.branches)
      ? Object.fromEntries(options.branches.map((b) => [b, undefined]))
      : (options.branches ?? {});
    if (!options.gitDir && !(repo.defaultBranch in branches))
      branches[repo.defaultBranch] = undefined;
    for (const [b, sha] of Object.entries(branches)) this.setBranch(repo, b, sha);
    for (const [b, sha] of this.listBranches(repo))
      this.moves.set(`${repo.id}:${b}`, { sha, at: Number.NEGATIVE_INFINITY, before: undefined });
    this.repos.set(key, repo);
    return repo;
  }

  /** Every branch of the repository with its SHA. */
  private listBranches(repo: RepoRecord): [string, string][] {
    if (!repo.gitDir) return [...repo.branches];
    const out = git(repo.gitDir, [
      "for-each-ref",
      "--format=%(refname:short) %(objectname)",
      "refs/heads",
    ]);
    return out
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => l.split(" ") as [string, string]);
  }

  /**
   * The SHA of branch `name` as the pull requests API sees it: `lagMs` after the stand-in first saw
   * it move (a push, `setBranch`), what it was before (undefined for a branch that was new).
   */
  visibleSha(repo: RepoRecord, name: string, lagMs: number): string | undefined {
    const sha = this.branchSha(repo, name);
    const k = `${repo.id}:${name}`;
    let m = this.moves.get(k);
    if (!m || m.sha !== sha) {
      m = { sha, at: this.now(), before: m?.sha };
      this.moves.set(k, m);
    }
    return this.now() - m.at < lagMs ? m.before : sha;
  }

  /** Sets branch `name` to `sha` (made up from the names when omitted). */
  setBranch(repo: RepoRecord, name: string, sha?: string): string {
    const value = sha ?? fakeSha(`${repo.owner.login}/${repo.name}@${name}`);
    if (!SHA.test(value)) throw new Error(`a branch's SHA is 40 hex digits, not ${value}`);
    const k = `${repo.id}:${name}`;
    const before = this.moves.get(k)?.sha;
    if (repo.gitDir) {
      git(repo.gitDir, ["update-ref", `refs/heads/${name}`, value]);
    } else {
      repo.branches.set(name, value);
    }
    if (this.repos.has(`${repo.owner.login}/${repo.name}`.toLowerCase()))
      this.moves.set(k, { sha: value, at: this.now(), before });
    return value;
  }

  /** The SHA of branch `name`, or undefined when it does not exist. */
  branchSha(repo: RepoRecord, name: string): string | undefined {
    if (!repo.gitDir) {
      const sha = repo.branches.get(name);
      if (sha !== undefined || !repo.pushedOnDemand?.(name)) return sha;
      const made = this.setBranch(repo, name);
      // As if pushed long before: the drill's heads are there when it asks.
      this.moves.set(`${repo.id}:${name}`, {
        sha: made,
        at: Number.NEGATIVE_INFINITY,
        before: undefined,
      });
      return made;
    }
    try {
      return git(repo.gitDir, ["rev-parse", "--verify", "--quiet", `refs/heads/${name}^{commit}`]);
    } catch (e) {
      // rev-parse --verify --quiet exits 1 and prints nothing for a ref that does not exist.
      if (exitedNonZero(e)) return undefined;
      throw e;
    }
  }

  /** True when `sha` names a commit the repository has (any SHA when it has no `gitDir`). */
  hasCommit(repo: RepoRecord, sha: string): boolean {
    if (!SHA.test(sha)) return false;
    if (!repo.gitDir) return true;
    try {
      git(repo.gitDir, ["cat-file", "-e", `${sha}^{commit}`]);
      return true;
    } catch (e) {
      if (exitedNonZero(e)) return false;
      throw e;
    }
  }

  addItem(
    repo: RepoRecord,
    fields: {
      title: string;
      body?: string | null;
      user: UserRecord;
      labels?: string[];
      state?: "open" | "closed";
      createdAt?: number;
      pull?: PullPart;
      apiAt?: number;
    },
  ): ItemRecord {
    const exact = fields.createdAt ?? this.now();
    const at = seconds(exact);
    const state = fields.state ?? "open";
    const item: ItemRecord = {
      id: this.nextId.item++,
      number: repo.nextNumber++,
      title: fields.title,
      body: fields.body ?? null,
      user: fields.user,
      state,
      labels: fields.labels ?? [],
      comments: 0,
      createdAt: at,
      updatedAt: at,
      closedAt: state === "closed" ? at : null,
      changedAt: exact,
    };
    if (fields.pull) item.pull = fields.pull;
    if (fields.apiAt !== undefined) item.apiAt = fields.apiAt;
    repo.items.set(item.number, item);
    return item;
  }

  addComment(
    repo: RepoRecord,
    item: ItemRecord,
    fields: { body: string; user: UserRecord; createdAt?: number; apiAt?: number },
  ): CommentRecord {
    const exact = fields.createdAt ?? this.now();
    const at = seconds(exact);
    const comment: CommentRecord = {
      id: this.nextId.comment++,
      issueNumber: item.number,
      body: fields.body,
      user: fields.user,
      createdAt: at,
      updatedAt: at,
      changedAt: exact,
    };
    if (fields.apiAt !== undefined) comment.apiAt = fields.apiAt;
    repo.comments.push(comment);
    item.comments++;
    // A new comment makes the issue "updated", as on GitHub (it moves in `sort=updated`).
    item.updatedAt = Math.max(item.updatedAt, at);
    return comment;
  }

  /** Closes or reopens an issue or pull request (as a person would on the web). */
  setItemState(item: ItemRecord, state: "open" | "closed"): void {
    const exact = this.now();
    item.state = state;
    item.updatedAt = seconds(exact);
    item.closedAt = state === "closed" ? seconds(exact) : null;
  }
}

/** True for the error of a git that ran and exited non-zero (not one that failed to start). */
function exitedNonZero(e: unknown): boolean {
  return e instanceof Error && typeof (e as { status?: unknown }).status === "number";
}

function git(gitDir: string, args: string[]): string {
  return execFileSync("git", ["--git-dir", gitDir, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}
