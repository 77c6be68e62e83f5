import type { AgentOutput, Job, StatusReport, ValidationIssue } from "@idem/schema";
import { DEFAULT_SUBJECT_PREFIX, redactSecret } from "@idem/schema";
import { IdemClientError } from "./client-error.js";
import { checkSubjectPrefix, type JetStreamPublisher, publishJob } from "./jetstream-enqueue.js";

/** How failed requests are retried: exponential backoff with full jitter. */
export interface RetryOptions {
  /** Tries in all, the first included (default 5). */
  attempts: number;
  /** The first backoff's ceiling in ms (default 100). */
  initialMs: number;
  /** The largest backoff ceiling in ms (default 5,000). */
  maxMs: number;
}

/** Options of {@link createClient}: `baseUrl`, `jetstream`, or both. */
export interface ClientOptions {
  /** The executor's API, e.g. `http://127.0.0.1:7070`; `submit`, `get` and `status` need it. */
  baseUrl?: string;
  /**
   * A JetStream client (`jetstream(nc)` of @nats-io/jetstream): `enqueue` then publishes the job
   * onto idem's jobs stream itself, with `Nats-Msg-Id` = job ID, instead of `POST /v1/jobs`.
   */
  jetstream?: JetStreamPublisher;
  /** The executor's `nats.subjectPrefix` (default `idem`): jobs go to `<prefix>.jobs.<agent>`. */
  subjectPrefix?: string;
  /** The `api.token` of the executor, sent as `Authorization: Bearer`. */
  token?: string;
  /** The fetch to use (default the platform's `globalThis.fetch`). */
  fetch?: typeof fetch;
  /** Retries on network errors, timeouts and 5xx (never on 4xx), and on a publish with no PubAck. */
  retry?: Partial<RetryOptions>;
  /** One call's whole budget, retries included, in ms (default 30,000). */
  deadlineMs?: number;
  /** One try's budget in ms (default 10,000, capped by what is left of the deadline). */
  timeoutMs?: number;
}

/**
 * The answer to `submit`: the server's submit shape (`SubmitAnswer` of @idem/schema, read
 * loosely). Named apart from core's `SubmitResult` and the schema's types so that a program
 * importing both sees which is which.
 */
export interface ClientSubmitAnswer {
  status: "recorded" | "duplicate" | "conflict" | "invalid" | "forbidden";
  jobId: string | null;
  issues?: ValidationIssue[];
}

/**
 * The answer to `enqueue`: `{ jobId, stream, seq, duplicate }` as `idem enqueue --json` prints it
 * (not the journal's `EnqueueResult`, which is a queue row's outcome).
 */
export interface ClientEnqueueAnswer {
  jobId: string;
  /** The JetStream stream, or `"embedded"` on the journal's own queue. */
  stream: string;
  seq: number;
  duplicate: boolean;
}

/**
 * A recorded output as `GET /v1/outputs/:jobId` answers it (the output under `output`): the JSON
 * of the journal's `OutputRecord`, read loosely.
 */
export type ClientOutputRecord = { jobId: string; output: AgentOutput } & Record<string, unknown>;

/** The journal's counts as `GET /v1/status` answers them (`StatusReport` of @idem/schema). */
export type ClientStatusReport = StatusReport;

/** A client of one executor's HTTP API, and of idem's jobs stream when given a JetStream client. */
export interface IdemClient {
  /**
   * Submits an agent's output. Safe to repeat: first write wins, so a retry after a lost answer
   * says `duplicate`; another output for the job says `conflict`, a refused one `invalid`, one the
   * client's agent token may not record (another agent's job, an effect outside its scope)
   * `forbidden`.
   * @throws IdemClientError UNAUTHORIZED, FORBIDDEN, TOO_LARGE, UNAVAILABLE, TIMEOUT, HTTP
   */
  submit(output: AgentOutput): Promise<ClientSubmitAnswer>;
  /**
   * The recorded output of a job, or `undefined` when none is recorded (404).
   * @throws IdemClientError UNAUTHORIZED, INVALID_INPUT (not a job ID), UNAVAILABLE, TIMEOUT, HTTP
   */
  get(jobId: string): Promise<ClientOutputRecord | undefined>;
  /**
   * The journal's counts.
   * @throws IdemClientError UNAUTHORIZED, UNAVAILABLE, TIMEOUT, HTTP
   */
  status(): Promise<ClientStatusReport>;
  /**
   * Enqueues a job. With `jetstream`: validated by the schema, then published to
   * `<prefix>.jobs.<agent>` with msg id = job ID, as `idem enqueue` publishes it; a publish with no
   * PubAck is retried with the same msg id. Without: `POST /v1/jobs` on the executor. Safe to
   * repeat: the same job again is a duplicate (`duplicate: true`). On JetStream another input under
   * the same job ID is not detected: inside the stream's duplicate window it is `duplicate: true`
   * and dropped by the stream; after it, the executor drops the delivery (the first input wins).
   * @throws IdemClientError INVALID_INPUT (names the field; nothing sent), JOB_CONFLICT (HTTP:
   * another input), NOT_IMPLEMENTED, UNAUTHORIZED, TOO_LARGE, UNAVAILABLE, TIMEOUT, HTTP, NATS
   */
  enqueue(job: Job): Promise<ClientEnqueueAnswer>;
}

interface Answer {
  status: number;
  body: unknown;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Creates a client of an executor's HTTP API on the platform's `fetch`, and of idem's jobs stream
 * on a JetStream client when `jetstream` is given.
 *
 * Every call is retried on network errors, timeouts and 5xx with exponential backoff and full
 * jitter, within `deadlineMs`; 4xx answers are final. Retrying a submit is safe by construction.
 * @throws TypeError when neither `baseUrl` nor `jetstream` is given, `baseUrl` is not a URL or
 * `subjectPrefix` is not a subject prefix. A call that needs `baseUrl` without one rejects with a
 * TypeError.
 */
export function createClient(options: ClientOptions): IdemClient {
  if (options.baseUrl === undefined && options.jetstream === undefined) {
    throw new TypeError(
      "createClient needs a baseUrl (the executor's HTTP API), a jetstream, or both",
    );
  }
  const base =
    options.baseUrl === undefined ? undefined : new URL(options.baseUrl).href.replace(/\/+$/, "");
  const js = options.jetstream;
  const subjectPrefix = checkSubjectPrefix(options.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX);
  const doFetch = options.fetch ?? globalThis.fetch;
  const retry: RetryOptions = { attempts: 5, initialMs: 100, maxMs: 5_000, ...options.retry };
  const deadlineMs = options.deadlineMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const token = options.token;
  // The token must never reach an error message, whatever the transport put in its own.
  const scrub = (s: string) => redactSecret(s, token);

  async function once(method: string, path: string, body: unknown, ms: number): Promise<Answer> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (token) headers.authorization = `Bearer ${token}`;
    const init: RequestInit = { method, headers, signal: AbortSignal.timeout(ms) };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await doFetch(`${base as string}${path}`, init);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      parsed = text;
    }
    return { status: res.status, body: parsed };
  }

  async function call(method: string, path: string, body?: unknown): Promise<Answer> {
    if (base === undefined) {
      throw new TypeError(
        `${method} ${path} needs the executor's HTTP API: createClient had no baseUrl`,
      );
    }
    const deadline = Date.now() + deadlineMs;
    let last: IdemClientError | undefined;
    for (let attempt = 0; attempt < retry.attempts; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        const answer = await once(method, path, body, Math.min(timeoutMs, left));
        if (answer.status < 500) return answer;
        last = new IdemClientError(
          "UNAVAILABLE",
          `${method} ${path} answered ${answer.status}: ${scrub(errorText(answer.body))}`,
          { status: answer.status, body: answer.body },
        );
      } catch (e) {
        last = transportError(e, method, path, scrub);
      }
      if (attempt + 1 >= retry.attempts) break;
      const ceiling = Math.min(retry.maxMs, retry.initialMs * 2 ** attempt);
      const wait = Math.random() * ceiling;
      if (Date.now() + wait >= deadline) break;
      await sleep(wait);
    }
    if (last && (last.code !== "TIMEOUT" || Date.now() < deadline)) throw last;
    throw new IdemClientError(
      "TIMEOUT",
      `${method} ${path}: no answer within the deadline of ${deadlineMs} ms${last ? ` (${last.message})` : ""}`,
      last?.status === undefined ? { cause: last } : { status: last.status, cause: last },
    );
  }

  function fail(method: string, path: string, a: Answer): never {
    const detail = scrub(errorText(a.body));
    const opts = { status: a.status, body: a.body };
    if (a.status === 401)
      throw new IdemClientError("UNAUTHORIZED", `${method} ${path}: ${detail}`, opts);
    if (a.status === 403)
      throw new IdemClientError("FORBIDDEN", `${method} ${path}: ${detail}`, opts);
    if (a.status === 413)
      throw new IdemClientError("TOO_LARGE", `${method} ${path}: ${detail}`, opts);
    if (a.status === 501)
      throw new IdemClientError("NOT_IMPLEMENTED", `${method} ${path}: ${detail}`, opts);
    throw new IdemClientError("HTTP", `${method} ${path} answered ${a.status}: ${detail}`, opts);
  }

  return {
    async submit(output) {
      const a = await call("POST", "/v1/outputs", output);
      if ([200, 201, 400, 403, 409].includes(a.status) && isSubmitAnswer(a.body)) return a.body;
      return fail("POST", "/v1/outputs", a);
    },
    async get(jobId) {
      const path = `/v1/outputs/${encodeURIComponent(jobId)}`;
      const a = await call("GET", path);
      if (a.status === 200) return a.body as ClientOutputRecord;
      if (a.status === 404) return undefined;
      if (a.status === 400) {
        throw new IdemClientError("INVALID_INPUT", `GET ${path}: ${errorText(a.body)}`, a);
      }
      return fail("GET", path, a);
    },
    async status() {
      const a = await call("GET", "/v1/status");
      if (a.status === 200) return a.body as ClientStatusReport;
      return fail("GET", "/v1/status", a);
    },
    async enqueue(job) {
      if (js) {
        return await publishJob(js, subjectPrefix, job, { ...retry, deadlineMs, timeoutMs });
      }
      const a = await call("POST", "/v1/jobs", job);
      if (a.status === 200 || a.status === 201) return a.body as ClientEnqueueAnswer;
      if (a.status === 409 || a.status === 400) {
        const code = a.status === 409 ? "JOB_CONFLICT" : "INVALID_INPUT";
        throw new IdemClientError(code, `POST /v1/jobs: ${scrub(errorText(a.body))}`, a);
      }
      return fail("POST", "/v1/jobs", a);
    },
  };
}

function isSubmitAnswer(b: unknown): b is ClientSubmitAnswer {
  if (typeof b !== "object" || b === null) return false;
  const s = (b as { status?: unknown }).status;
  return (
    s === "recorded" ||
    s === "duplicate" ||
    s === "conflict" ||
    s === "invalid" ||
    s === "forbidden"
  );
}

/** The server's `error` text, or the body itself. */
function errorText(body: unknown): string {
  if (typeof body === "object" && body !== null && "error" in body) {
    const e = (body as { error: unknown }).error;
    return typeof e === "string" ? e : JSON.stringify(e);
  }
  return typeof body === "string" ? body.slice(0, 500) : JSON.stringify(body ?? null);
}

/** A fetch that threw: TIMEOUT when it timed out or was aborted, UNAVAILABLE otherwise. */
function transportError(
  e: unknown,
  method: string,
  path: string,
  scrub: (s: string) => string,
): IdemClientError {
  const name = e instanceof Error ? e.name : "";
  const message = scrub(e instanceof Error ? e.message : String(e));
  if (name === "TimeoutError" || name === "AbortError") {
    return new IdemClientError("TIMEOUT", `${method} ${path} timed out: ${message}`);
  }
  return new IdemClientError("UNAVAILABLE", `${method} ${path} failed: ${message}`);
}
