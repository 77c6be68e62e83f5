/**
 * The GitHub stand-in's rate limits and armed faults.
 *
 * Primary limits as GitHub keeps them: a quota per resource (`core` 5,000 an hour, `search` 30 a
 * minute by default) whose state every answer carries in `x-ratelimit-limit`, `-remaining`,
 * `-used`, `-reset` (epoch seconds) and `-resource`; a request past the quota is answered 403
 * with `x-ratelimit-remaining: 0` until the reset time. Secondary limits on content creation, as
 * GitHub documents them ("Rate limits for the REST API", "About secondary rate limits"): more than
 * 80 content-creating requests a minute, or 500 an hour, by one account are refused 403 with
 * `retry-after`. Other secondary limits on demand: the next requests (or those a predicate picks)
 * answered 403 or 429 with `retry-after`.
 */
import type { GitHubCreate } from "./github-answers.js";

/** A request as the knobs' predicates see it. */
export interface GitHubRequestInfo {
  method: string;
  /** The path as received, without the query (and without a configured base path). */
  path: string;
  /** The description's operation, `METHOD /template`, when one matched. */
  operation?: string;
}

/** Arms a fault for the next `times` events (1 by default) that `match` accepts (all if none). */
export interface ArmOptions<T> {
  times?: number;
  match?: (event: T) => boolean;
}

/** Rules armed by tests, each used up by the events it matches. */
export class Armed<T> {
  private readonly rules: { left: number; match?: (e: T) => boolean; data: unknown }[] = [];

  arm(options: ArmOptions<T>, data?: unknown): void {
    const rule: { left: number; match?: (e: T) => boolean; data: unknown } = {
      left: options.times ?? 1,
      data,
    };
    if (options.match) rule.match = options.match;
    this.rules.push(rule);
  }

  /** The data of the first live rule `event` matches, which it uses up; undefined if none. */
  take(event: T): { data: unknown } | undefined {
    const rule = this.rules.find((r) => r.left > 0 && (!r.match || r.match(event)));
    if (!rule) return undefined;
    rule.left--;
    return { data: rule.data };
  }

  clear(): void {
    this.rules.length = 0;
  }
}

/** The primary quota of one resource. */
interface Window {
  limit: number;
  used: number;
  /** When the quota refills, ms (a whole second: the header's epoch seconds). */
  resetAt: number;
  lengthMs: number;
  /** The status of a refusal past the quota (GitHub answers 403, or 429). */
  status: 403 | 429;
}

/** A secondary limit's answer. */
export interface SecondaryLimit {
  status: 403 | 429;
  retryAfterSeconds: number;
}

/** What {@link RateLimits.take} decided for one request. */
export interface RateDecision {
  headers: Record<string, string>;
  refused?: { status: number; message: string; retryAfter?: number };
}

const ceilSecond = (ms: number) => Math.ceil(ms / 1000) * 1000;

/** GitHub's limits on content creation per account: a minute's and an hour's. */
export const CONTENT_LIMITS = { perMinute: 80, perHour: 500 } as const;

export class RateLimits {
  private readonly windows = new Map<string, Window>();
  readonly secondary = new Armed<GitHubRequestInfo>();
  /** Requests refused by a primary or secondary limit. */
  refusals = 0;
  /** Of those, the ones refused by the limits on content creation. */
  contentRefusals = 0;
  /** The times of each account's content-creating requests, the last hour's. */
  private readonly content = new Map<string, number[]>();

  constructor(
    private readonly now: () => number,
    private readonly limits: { core: number; search: number },
    private readonly userId: () => number,
  ) {}

  /** Counts a content-creating request of `login`; the refusal when over GitHub's limits. */
  private creating(login: string): RateDecision["refused"] {
    const now = this.now();
    const times = (this.content.get(login.toLowerCase()) ?? []).filter((t) => t > now - 3_600_000);
    this.content.set(login.toLowerCase(), times);
    const lastMinute = times.filter((t) => t > now - 60_000).length;
    if (lastMinute >= CONTENT_LIMITS.perMinute || times.length >= CONTENT_LIMITS.perHour) {
      this.refusals++;
      this.contentRefusals++;
      return {
        status: 403,
        retryAfter: 60,
        message:
          "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later. If you reach out to GitHub Support for help, please include the request ID.",
      };
    }
    times.push(now);
    return undefined;
  }

  private window(resource: string): Window {
    const now = this.now();
    let w = this.windows.get(resource);
    if (!w || now >= w.resetAt) {
      const lengthMs = resource === "search" ? 60_000 : 3_600_000;
      const limit = resource === "search" ? this.limits.search : this.limits.core;
      w = { limit, used: 0, resetAt: ceilSecond(now + lengthMs), lengthMs, status: 403 };
      this.windows.set(resource, w);
    }
    return w;
  }

  private headers(resource: string, w: Window): Record<string, string> {
    return {
      "x-ratelimit-limit": String(w.limit),
      "x-ratelimit-remaining": String(Math.max(0, w.limit - w.used)),
      "x-ratelimit-reset": String(w.resetAt / 1000),
      "x-ratelimit-used": String(w.used),
      "x-ratelimit-resource": resource,
    };
  }

  /** The `rate-limit` object of a resource, for `GET /rate_limit` (which costs nothing). */
  snapshot(resource: string) {
    const w = this.window(resource);
    return {
      limit: w.limit,
      remaining: Math.max(0, w.limit - w.used),
      reset: w.resetAt / 1000,
      used: w.used,
    };
  }

  /**
   * Counts one request against `resource` (unless `free`) and, for a content-creating one, against
   * its account's (`content`, a login) limits; says whether it is refused.
   */
  take(resource: string, info: GitHubRequestInfo, free = false, content?: string): RateDecision {
    const w = this.window(resource);
    if (w.used >= w.limit) {
      this.refusals++;
      return {
        headers: this.headers(resource, w),
        refused: {
          status: w.status,
          message: `API rate limit exceeded for user ID ${this.userId()}. If you reach out to GitHub Support for help, please include the request ID.`,
        },
      };
    }
    const secondary = this.secondary.take(info);
    if (secondary) {
      this.refusals++;
      const s = secondary.data as SecondaryLimit;
      return {
        headers: this.headers(resource, w),
        refused: {
          status: s.status,
          retryAfter: s.retryAfterSeconds,
          message:
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
        },
      };
    }
    if (content !== undefined) {
      const refused = this.creating(content);
      if (refused) return { headers: this.headers(resource, w), refused };
    }
    if (!free) w.used++;
    return { headers: this.headers(resource, w) };
  }

  /** Uses up `resource`'s quota; it refills `resetInSeconds` from now (rounded up to a second). */
  exhaust(resource: string, resetInSeconds: number, status: 403 | 429 = 403): void {
    const w = this.window(resource);
    w.used = w.limit;
    w.status = status;
    w.resetAt = ceilSecond(this.now() + resetInSeconds * 1000);
  }
}

/** A fault on creates: the event the create knobs' predicates see. */
export type CreateFaultEvent = GitHubCreate;
