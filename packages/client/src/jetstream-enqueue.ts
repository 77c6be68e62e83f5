// Enqueueing straight onto idem's jobs stream, as idem's own JobPublisher (@idem/nats) publishes: the
// client imports no NATS package, so the msg id and the payload are mirrored here (the subject is
// @idem/schema's), and packages/client/test/jetstream-enqueue.int.test.ts proves they agree with
// @idem/nats.
import {
  type Job,
  jobSubject,
  natsFailureOf,
  SUBJECT_PREFIX_PATTERN,
  validateJob,
} from "@idem/schema";
import { IdemClientError } from "./client-error.js";

/** The answer of a JetStream stream to one publish (the `PubAck` of @nats-io/jetstream). */
export interface JetStreamPubAck {
  stream: string;
  seq: number;
  /** True when the stream already held this msg id inside its duplicate window. */
  duplicate: boolean;
}

/**
 * What `enqueue` needs of a JetStream client: `jetstream(nc)` of @nats-io/jetstream fits as it is
 * (the client imports no NATS package; any object with this `publish` does).
 */
export interface JetStreamPublisher {
  publish(
    subject: string,
    payload: string,
    options: { msgID: string; timeout: number },
  ): Promise<JetStreamPubAck>;
}

/** @throws TypeError naming `subjectPrefix` when it is not a NATS subject prefix. */
export function checkSubjectPrefix(prefix: string): string {
  if (!SUBJECT_PREFIX_PATTERN.test(prefix)) {
    throw new TypeError(
      `subjectPrefix ${JSON.stringify(prefix)} must be dot-separated tokens of letters, digits, _ and - (as nats.subjectPrefix)`,
    );
  }
  return prefix;
}

/**
 * The job as idem enqueues it: sent through JSON as over HTTP, validated by the schema, and the
 * payload is the JSON of the validated job, byte for byte what JobPublisher publishes.
 * @throws IdemClientError INVALID_INPUT naming each field, before anything is published.
 */
export function jobPayload(job: Job): { job: Job; payload: string } {
  let raw: unknown;
  try {
    const text = JSON.stringify(job);
    raw = text === undefined ? undefined : JSON.parse(text);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    const problems = [`(job): is not JSON: ${e.message}`];
    throw new IdemClientError("INVALID_INPUT", `enqueue: invalid job: ${problems[0]}`, {
      body: { error: "invalid job", problems },
    });
  }
  const v = validateJob(raw);
  if (!v.ok) {
    const problems = v.issues.map((i) => `${i.path || "(job)"}: ${i.message}`);
    throw new IdemClientError("INVALID_INPUT", `enqueue: invalid job: ${problems.join("; ")}`, {
      body: { error: "invalid job", problems },
    });
  }
  return { job: v.value, payload: JSON.stringify(v.value) };
}

/** How {@link publishJob} retries: the client's retry options and budgets. */
export interface PublishBudget {
  attempts: number;
  initialMs: number;
  maxMs: number;
  deadlineMs: number;
  timeoutMs: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Publishes one job to `<prefix>.jobs.<agent>` with msg id = job ID and waits for the PubAck. A
 * publish that got no PubAck is tried again with the same msg id and the same bytes (the stream
 * stores it once inside its duplicate window), with backoff and full jitter, within the deadline.
 * @throws IdemClientError INVALID_INPUT (nothing published), TOO_LARGE (over the server's
 * max_payload), UNAVAILABLE or TIMEOUT (no PubAck after the retries), NATS (any other refusal).
 */
export async function publishJob(
  js: JetStreamPublisher,
  subjectPrefix: string,
  input: Job,
  budget: PublishBudget,
): Promise<{ jobId: string; stream: string; seq: number; duplicate: boolean }> {
  const { job, payload } = jobPayload(input);
  const subject = jobSubject(subjectPrefix, job.agent);
  const what = `publishing job ${job.jobId} to ${subject}`;
  const deadline = Date.now() + budget.deadlineMs;
  let last: IdemClientError | undefined;
  for (let attempt = 0; attempt < budget.attempts; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    try {
      const timeout = Math.max(1, Math.min(budget.timeoutMs, left));
      const ack = await js.publish(subject, payload, { msgID: job.jobId, timeout });
      return { jobId: job.jobId, stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
    } catch (e) {
      const failure = natsFailureOf(e);
      const cause = (e as { cause?: unknown })?.cause;
      const message =
        (e instanceof Error ? e.message : String(e)) +
        (cause instanceof Error ? ` (${cause.message})` : "");
      if (failure === "too-large") {
        throw new IdemClientError("TOO_LARGE", `${what}: ${message}`, { cause: e });
      }
      if (failure === undefined) {
        throw new IdemClientError("NATS", `${what} was refused: ${message}`, { cause: e });
      }
      last = new IdemClientError(
        failure === "timeout" ? "TIMEOUT" : "UNAVAILABLE",
        `${what}: ${message}`,
        { cause: e },
      );
    }
    if (attempt + 1 >= budget.attempts) break;
    const wait = Math.random() * Math.min(budget.maxMs, budget.initialMs * 2 ** attempt);
    if (Date.now() + wait >= deadline) break;
    await sleep(wait);
  }
  if (last && (last.code !== "TIMEOUT" || Date.now() < deadline)) throw last;
  throw new IdemClientError(
    "TIMEOUT",
    `${what}: no PubAck within the deadline of ${budget.deadlineMs} ms${last ? ` (${last.message})` : ""}`,
    { cause: last },
  );
}
