// Builders of the effects of idem's kinds for services (GitHub, Slack, SQL), as an agent sends
// them (docs/kinds/*.md). Written here since the client ships alone; packages/client's test
// parses every builder's effect with its kind's own schema and checks that every kind idem ships
// has a builder, so the two never drift apart.

type Args<T> = Omit<T, "kind">;

/** `github.issue`: an issue on a configured repository (`github.repos` alias). */
export type GitHubIssueEffect = {
  kind: "github.issue";
  repo: string;
  title: string;
  body?: string;
  labels?: string[];
};
/** `github.comment`: a comment on an issue or pull request by number. */
export type GitHubCommentEffect = {
  kind: "github.comment";
  repo: string;
  number: number;
  body: string;
};
/** `github.pull_request`: a pull request from `head` into `base` (the repository's default). */
export type GitHubPullRequestEffect = {
  kind: "github.pull_request";
  repo: string;
  title: string;
  body?: string;
  head: string;
  base?: string;
  draft?: boolean;
};
/** `slack.message`: one message in a configured channel (`slack.channels` alias), Slack mrkdwn. */
export type SlackMessageEffect = {
  kind: "slack.message";
  channel: string;
  text: string;
  unfurl?: boolean;
};
/** `sql.exec`: named statements of a `sql.targets` alias, run in order, all or none. */
export type SqlExecEffect = {
  kind: "sql.exec";
  target: string;
  statements: { name: string; params?: Record<string, unknown> }[];
};

/** A `github.issue` effect: found again after a crash by the key's hidden marker. Pure. */
export function githubIssue(args: Args<GitHubIssueEffect>): GitHubIssueEffect {
  return { kind: "github.issue", ...args };
}

/** A `github.comment` effect on issue or pull request `number`. Pure. */
export function githubComment(args: Args<GitHubCommentEffect>): GitHubCommentEffect {
  return { kind: "github.comment", ...args };
}

/** A `github.pull_request` effect: one pull request per key. Pure. */
export function githubPullRequest(args: Args<GitHubPullRequestEffect>): GitHubPullRequestEffect {
  return { kind: "github.pull_request", ...args };
}

/** A `slack.message` effect: the key travels in the message's metadata. Pure. */
export function slackMessage(args: Args<SlackMessageEffect>): SlackMessageEffect {
  return { kind: "slack.message", ...args };
}

/** A `sql.exec` effect: the statements and the key commit in one transaction. Pure. */
export function sqlExec(args: Args<SqlExecEffect>): SqlExecEffect {
  return { kind: "sql.exec", ...args };
}
