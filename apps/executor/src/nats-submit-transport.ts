import { grantOf, parseSubmission, type SubmitMetrics, submitOutput } from "@idem/core";
import {
  type NatsConnection,
  type SubmitRequest,
  type SubmitResponder,
  startSubmitResponder,
} from "@idem/nats";
import { classifyError, describeError } from "@idem/schema";
import type { ExecutorTransport, TransportContext } from "./transport.js";

/**
 * The NATS submit responder: answers `<prefix>.submit` requests (one executor of the queue group
 * each) as `POST /v1/outputs` would, with the submit result as JSON: a body over
 * `api.maxBodyBytes` or not valid is `invalid`, a journal error `{ status: "error", error, class }`.
 * A request on `<prefix>.submit.<agent>` is held to `credentials.<agent>` as that agent's token
 * is over HTTP (`forbidden` beyond it, and for an agent the config gives no credential): the NATS
 * server's permissions say who may publish on which subject (docs/security.md).
 */
export function createNatsSubmitTransport(
  context: TransportContext,
  nc: NatsConnection,
  metrics: SubmitMetrics,
): ExecutorTransport {
  const { config, journal } = context;
  let responder: SubmitResponder | undefined;

  async function answer(request: SubmitRequest): Promise<unknown> {
    if (request.size > config.api.maxBodyBytes) {
      return {
        status: "invalid",
        jobId: null,
        issues: [
          { path: "", message: `is larger than api.maxBodyBytes (${config.api.maxBodyBytes})` },
        ],
      };
    }
    const grant = request.agent === undefined ? undefined : grantOf(config, request.agent);
    if (request.agent !== undefined && !grant)
      return {
        status: "forbidden",
        jobId: null,
        issues: [
          {
            path: "",
            message: `the config gives agent ${JSON.stringify(request.agent.slice(0, 64))} no credential (credentials.<agent>): nothing is recorded on its subject`,
          },
        ],
      };
    const parsed = parseSubmission(request.data, config.limits.maxOutputBytes);
    try {
      return parsed.ok
        ? await submitOutput({
            journal,
            config,
            raw: parsed.value,
            source: "nats",
            grant,
            ...(grant ? { actor: `agent ${grant.agent} (nats)` } : {}),
            metrics,
            trace: {
              traceparent: request.traceparent,
              ...(context.tracing ? { tracing: context.tracing } : {}),
            },
          })
        : parsed.result;
    } catch (e) {
      return { status: "error", error: describeError(e), class: classifyError(e) };
    }
  }

  return {
    async start() {
      if (!config.nats) return;
      responder = await startSubmitResponder({
        nc,
        subjectPrefix: config.nats.subjectPrefix,
        answer,
      });
    },
    async stop() {
      responder?.stop();
    },
  };
}
