import { decideApproval, type Principal } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import {
  ApprovalDecisionBodySchema,
  type Config,
  httpStatusOfError,
  isIdemError,
  isJobId,
  systemClock,
} from "@idem/schema";
import type { Context, Hono, MiddlewareHandler } from "hono";

/** What the approval routes answer an agent's token: deciding is a person's, through the operator. */
const NOT_AN_AGENTS = (agent: string) => ({
  error: `forbidden: agent ${agent}'s token may not decide approvals; that takes api.token`,
});

/**
 * The approval routes of the executor's API (docs/approvals.md), for a chat-ops bot or a script:
 * `GET /v1/approvals` (the runs awaiting), `POST /v1/approvals/:jobId/approve` and `.../reject`
 * with `{ reason, actor, effects?, digest? }`. The operator's token only: an agent's token is
 * refused (403), so no agent approves its own output. The actor is recorded as `actor (http)`.
 * A refusal answers its code's status (409 not awaiting, expired, another digest; 404 unknown).
 */
export function approvalRoutes(
  app: Hono<{ Variables: { principal: Principal } }>,
  options: { config: Config; journal: JournalStore },
  middleware: { jsonBody: MiddlewareHandler; limit: MiddlewareHandler },
): void {
  const { config, journal } = options;
  const operatorOnly = (c: Context<{ Variables: { principal: Principal } }>) => {
    const principal = c.get("principal");
    return principal.operator ? undefined : c.json(NOT_AN_AGENTS(principal.grant.agent), 403);
  };
  app.get("/v1/approvals", async (c) => {
    const refused = operatorOnly(c);
    if (refused) return refused;
    return c.json({ awaiting: await journal.approvals.awaiting(100) });
  });
  for (const action of ["approve", "reject"] as const) {
    app.post(`/v1/approvals/:jobId/${action}`, middleware.jsonBody, middleware.limit, async (c) => {
      const refused = operatorOnly(c);
      if (refused) return refused;
      const jobId = c.req.param("jobId");
      if (!isJobId(jobId)) return c.json({ error: "not a job ID" }, 400);
      let raw: unknown;
      try {
        raw = await c.req.json();
      } catch {
        return c.json({ error: "the body is not JSON" }, 400);
      }
      const body = ApprovalDecisionBodySchema.safeParse(raw);
      if (!body.success) {
        const issue = body.error.issues[0];
        const field = issue?.path.join(".") || "(body)";
        return c.json({ error: `${field}: ${issue?.message ?? "invalid"}` }, 400);
      }
      try {
        const result = await decideApproval(journal, config.approvals, systemClock, {
          jobId,
          approve: action === "approve",
          reason: body.data.reason,
          actor: `${body.data.actor} (http)`,
          effects: body.data.effects,
          digest: body.data.digest,
        });
        return c.json(result, 200);
      } catch (e) {
        if (!isIdemError(e) || !["INVALID_STATE", "NOT_FOUND", "INVALID_INPUT"].includes(e.code))
          throw e;
        return c.json({ error: e.message }, httpStatusOfError(e) as 400 | 404 | 409);
      }
    });
  }
}
