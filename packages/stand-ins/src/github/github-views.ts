/** What a test reads of the GitHub stand-in's repositories: pull requests, issues, comments. */
import { iso } from "./github-json.js";
import type { RepoRecord } from "./github-state.js";

/** A pull request as the stand-in holds it. */
export interface StandInPullRequest {
  number: number;
  title: string;
  body: string | null;
  head: string;
  base: string;
  state: "open" | "closed";
  user: string;
  draft: boolean;
  createdAt: string;
}

/** An issue (not a pull request) as the stand-in holds it. */
export interface StandInIssue {
  number: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  user: string;
  labels: string[];
  createdAt: string;
}

/** An issue comment (on an issue or a pull request). */
export interface StandInComment {
  id: number;
  issueNumber: number;
  body: string;
  user: string;
  createdAt: string;
}

export function pullRequestViews(repo: RepoRecord): StandInPullRequest[] {
  return [...repo.items.values()].flatMap((i) =>
    i.pull
      ? [
          {
            number: i.number,
            title: i.title,
            body: i.body,
            head: i.pull.headRef,
            base: i.pull.baseRef,
            state: i.state,
            user: i.user.login,
            draft: i.pull.draft,
            createdAt: iso(i.createdAt),
          },
        ]
      : [],
  );
}

export function issueViews(repo: RepoRecord): StandInIssue[] {
  return [...repo.items.values()].flatMap((i) =>
    i.pull
      ? []
      : [
          {
            number: i.number,
            title: i.title,
            body: i.body,
            state: i.state,
            user: i.user.login,
            labels: [...i.labels],
            createdAt: iso(i.createdAt),
          },
        ],
  );
}

export function commentViews(repo: RepoRecord, number?: number): StandInComment[] {
  return repo.comments
    .filter((c) => number === undefined || c.issueNumber === number)
    .map((c) => ({
      id: c.id,
      issueNumber: c.issueNumber,
      body: c.body,
      user: c.user.login,
      createdAt: iso(c.createdAt),
    }));
}
