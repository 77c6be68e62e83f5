/**
 * The GitHub stand-in's request handling: base path and `/repositories/{id}` paths, the checks
 * GitHub makes before an operation runs (User-Agent, API version, token, rate limits), the
 * request checked against GitHub's description, the route, the create counters and fault knobs,
 * and the answer checked against the description before it is sent.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorAnswer, type GitHubCreate, type RouteAnswer } from "./github-answers.js";
import { APP_ROUTES } from "./github-app-routes.js";
import { authenticate, type GitHubAuth } from "./github-apps.js";
import { checkRequest, checkResponse, type MatchedPath } from "./github-check.js";
import type { GitHubDescription } from "./github-description.js";
import type { Bases } from "./github-json.js";
import type { Armed, GitHubRequestInfo, RateLimits } from "./github-limits.js";
import { ROUTES } from "./github-routes.js";
import { searchIssues } from "./github-search.js";
import type { GitHubState, RepoRecord } from "./github-state.js";

/** A request or answer that does not match GitHub's description, or a request GitHub refuses. */
export interface GitHubViolation {
  /** `request`: the client's fault; `response`: the stand-in's own answer (a bug to report). */
  side: "request" | "response";
  method: string;
  path: string;
  /** `METHOD /template` of the description, when one matched. */
  operation?: string;
  /** The status answered (0 when the connection was dropped). */
  status: number;
  /** True when GitHub answers the request with an error; false when it silently ignores it. */
  rejected: boolean;
  problems: string[];
}

/** One request the stand-in received, in order. */
export interface GitHubRequestRecord {
  method: string;
  path: string;
  query: string;
  operation?: string;
  /** The status answered; 0 when the connection was dropped instead. */
  status: number;
  dropped: boolean;
}

/** The mutable parts the server shares with the handle. */
export interface ServerParts {
  state: GitHubState;
  description: GitHubDescription;
  match(path: string): MatchedPath | undefined;
  limits: RateLimits;
  auth: GitHubAuth;
  now: () => number;
  basePath: string;
  bases(): Bases;
  searchLagMs: number;
  /** How long a create takes to show in the list endpoints (read-after-write lag). */
  listLagMs: number;
  /** How long a push takes to reach the pull requests API. */
  pushLagMs: number;
  /** Requests refused for a token that expired or was revoked (a client renews it). */
  expiredTokens: number;
  dropBefore: Armed<GitHubCreate>;
  dropAfter: Armed<GitHubCreate>;
  failures: Armed<GitHubRequestInfo>;
  creates: Record<GitHubCreate["kind"], number>;
  requests: GitHubRequestRecord[];
  violations: GitHubViolation[];
}

const API_VERSION = "2022-11-28";
const MAX_REQUEST = 25 * 1024 * 1024;

const CREATES: Record<string, GitHubCreate["kind"]> = {
  "post /repos/{owner}/{repo}/pulls": "pull_request",
  "post /repos/{owner}/{repo}/issues": "issue",
  "post /repos/{owner}/{repo}/issues/{issue_number}/comments": "comment",
  "post /repos/{owner}/{repo}/git/refs": "ref",
};

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function tokenOf(header: string | undefined): string | undefined {
  const m = /^(?:bearer|token)\s+(\S+)\s*$/i.exec(header ?? "");
  return m?.[1];
}

/** Handles one request; never throws (an error of its own is answered 500 and recorded). */
export async function handleGitHubRequest(
  p: ServerParts,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const method = (req.method ?? "GET").toLowerCase();
  const url = new URL(req.url ?? "/", "http://stand-in");
  let path = url.pathname;
  const record: GitHubRequestRecord = {
    method: method.toUpperCase(),
    path,
    query: url.search,
    status: 0,
    dropped: false,
  };
  p.requests.push(record);
  const violate = (v: Omit<GitHubViolation, "method" | "path">) =>
    p.violations.push({ method: record.method, path: record.path, ...v });
  let headers: Record<string, string> = {};
  /** Violations GitHub lets pass, whose status is the answer's, known only when it is sent. */
  const pending: GitHubViolation[] = [];
  const silently = (problems: string[]) => {
    if (problems.length === 0) return;
    const v: GitHubViolation = {
      side: "request",
      method: record.method,
      path: record.path,
      status: 0,
      rejected: false,
      problems,
    };
    if (record.operation) v.operation = record.operation;
    pending.push(v);
    p.violations.push(v);
  };
  const send = (answer: RouteAnswer, template?: string) => {
    for (const v of pending) v.status = answer.status;
    const all: Record<string, string> = {
      "content-type": "application/json; charset=utf-8",
      "x-github-api-version-selected": API_VERSION,
      "x-github-media-type": "github.v3; format=json",
      "x-github-request-id": `STAND-IN:${p.requests.length}`,
      date: new Date(p.now()).toUTCString(),
      ...headers,
      ...(answer.headers ?? {}),
    };
    if (template) {
      const problems = checkResponse(
        p.description,
        method,
        template,
        answer.status,
        all,
        answer.body,
      );
      if (problems.length > 0)
        violate({
          side: "response",
          operation: record.operation,
          status: answer.status,
          rejected: false,
          problems,
        });
    }
    record.status = answer.status;
    const text = answer.body === undefined ? "" : JSON.stringify(answer.body);
    res.writeHead(answer.status, { ...all, "content-length": String(Buffer.byteLength(text)) });
    res.end(text);
  };
  const drop = () => {
    record.dropped = true;
    req.socket.destroy();
  };
  try {
    const raw = await readBody(req);
    if (p.basePath) {
      if (path !== p.basePath && !path.startsWith(`${p.basePath}/`)) {
        violate({
          side: "request",
          status: 404,
          rejected: true,
          problems: [`not under the base path ${p.basePath}`],
        });
        return send(errorAnswer(404, "Not Found"));
      }
      path = path.slice(p.basePath.length) || "/";
    }
    const byId = /^\/repositories\/(\d+)(\/.*)?$/.exec(path);
    if (byId) {
      const repo = p.state.repoById(Number(byId[1]));
      if (repo) path = `/repos/${repo.owner.login}/${repo.name}${byId[2] ?? ""}`;
    }
    const matched = p.match(path);
    const op = matched ? p.description.operation(method, matched.template) : undefined;
    if (matched && op) record.operation = `${record.method} ${matched.template}`;
    if (!matched || !op) {
      const why = !matched
        ? "no path of GitHub's description matches"
        : `the stand-in does not serve ${record.method} ${matched.template} (or GitHub has no such operation)`;
      violate({ side: "request", status: 404, rejected: true, problems: [why] });
      return send(errorAnswer(404, "Not Found"));
    }
    const template = matched.template;
    const docs = String(
      (op.externalDocs as { url?: unknown } | undefined)?.url ?? "https://docs.github.com/rest",
    );
    const refuse = (status: number, message: string, problem: string) => {
      violate({
        side: "request",
        operation: record.operation,
        status,
        rejected: true,
        problems: [problem],
      });
      return send(errorAnswer(status, message, docs), template);
    };
    if (!req.headers["user-agent"]) {
      violate({
        side: "request",
        operation: record.operation,
        status: 403,
        rejected: true,
        problems: ["no User-Agent header"],
      });
      record.status = 403;
      res.writeHead(403, { "content-type": "text/plain; charset=utf-8" });
      res.end(
        "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.\n",
      );
      return;
    }
    const version = req.headers["x-github-api-version"];
    if (version !== undefined && version !== API_VERSION)
      return refuse(
        400,
        `API version ${String(version)} is not supported.`,
        `X-GitHub-Api-Version ${String(version)}: the stand-in serves ${API_VERSION}`,
      );
    const token = tokenOf(req.headers.authorization);
    // GitHub answers GET /rate_limit without a token too (the caller's address's quota of 60 an
    // hour, counted against nothing): how `idem doctor` asks whether the API is there at all.
    if (token === undefined && method === "get" && template === "/rate_limit") {
      const anonymous = {
        limit: 60,
        remaining: 60,
        reset: Math.ceil(p.now() / 1000) + 3600,
        used: 0,
      };
      return send(
        {
          status: 200,
          body: { resources: { core: anonymous, search: anonymous }, rate: anonymous },
        },
        template,
      );
    }
    if (token === undefined)
      return refuse(401, "Requires authentication", "no token (Authorization: Bearer <token>)");
    const who = authenticate(p.auth, p.state, token, template);
    if ("status" in who) {
      if (who.violation) return refuse(who.status, who.message, who.violation);
      if (who.status === 401 && !who.jwt) p.expiredTokens++;
      return send(errorAnswer(who.status, who.message, docs), template);
    }
    const { user, granted, app } = who;
    const info: GitHubRequestInfo = { method: record.method, path, operation: record.operation };
    const resource = template === "/search/issues" ? "search" : "core";
    const key = `${method} ${template}`;
    const content = CREATES[key] !== undefined ? user.login : undefined;
    const rate = p.limits.take(resource, info, template === "/rate_limit", content);
    headers = rate.headers;
    if (rate.refused) {
      if (rate.refused.retryAfter !== undefined)
        headers["retry-after"] = String(rate.refused.retryAfter);
      record.status = rate.refused.status;
      return send(
        errorAnswer(
          rate.refused.status,
          rate.refused.message,
          "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
        ),
        template,
      );
    }
    const failure = p.failures.take(info);
    if (failure) {
      const status = failure.data as number;
      return send(
        errorAnswer(status, status === 503 ? "Service Unavailable" : "Server Error"),
        template,
      );
    }
    let body: unknown;
    if (raw === undefined) return refuse(413, "Payload Too Large", "a body over 25 MB");
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch (e) {
        if (!(e instanceof SyntaxError)) throw e;
        return refuse(400, "Problems parsing JSON", `the body is not JSON: ${e.message}`);
      }
    }
    const checked = checkRequest(
      p.description,
      method,
      template,
      matched.params,
      url.searchParams,
      body,
    );
    silently(checked.ignored);
    if (checked.badPath) return refuse(404, "Not Found", checked.rejected.join("; "));
    if (checked.rejected.length > 0) {
      const status = raw.length > 0 && body !== null && typeof body !== "object" ? 400 : 422;
      violate({
        side: "request",
        operation: record.operation,
        status,
        rejected: true,
        problems: checked.rejected,
      });
      return send(
        errorAnswer(status, `Invalid request.\n\n${checked.rejected.join("\n")}`, docs),
        template,
      );
    }
    const kind = CREATES[key];
    if (kind) {
      const candidate: GitHubCreate = {
        kind,
        owner: String(checked.path.owner),
        repo: String(checked.path.repo),
        body: checked.body,
      };
      if (typeof checked.path.issue_number === "number")
        candidate.number = checked.path.issue_number;
      if (p.dropBefore.take(candidate)) return drop();
    }
    const bases = p.bases();
    const route =
      key === "get /search/issues"
        ? searchIssues
        : key === "get /rate_limit"
          ? undefined
          : (ROUTES[key] ?? APP_ROUTES[key]);
    const answer: RouteAnswer = route
      ? route({
          state: p.state,
          bases,
          user,
          now: p.now,
          path: checked.path,
          query: checked.query,
          body: checked.body,
          docs,
          searchLagMs: p.searchLagMs,
          listLagMs: p.listLagMs,
          pushLagMs: p.pushLagMs,
          auth: p.auth,
          token: granted,
          app,
          linkBase: (repo?: RepoRecord) => {
            const at = repo
              ? path.replace(/^\/repos\/[^/]+\/[^/]+/, `/repositories/${repo.id}`)
              : path;
            return new URL(`${bases.api}${at}${url.search}`);
          },
        })
      : {
          status: 200,
          body: {
            resources: { core: p.limits.snapshot("core"), search: p.limits.snapshot("search") },
            rate: p.limits.snapshot("core"),
          },
        };
    silently(answer.ignored ?? []);
    if (answer.created) {
      p.creates[answer.created.kind]++;
      if (p.dropAfter.take(answer.created)) return drop();
    }
    return send(answer, template);
  } catch (e) {
    violate({
      side: "response",
      operation: record.operation,
      status: 500,
      rejected: false,
      problems: [`the stand-in failed: ${e instanceof Error ? e.stack : String(e)}`],
    });
    if (!res.headersSent) send(errorAnswer(500, "Server Error"));
  }
}
