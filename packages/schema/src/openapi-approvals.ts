// The approval routes of the OpenAPI document (openapi.ts builds the rest): docs/approvals.md.
import type { ComponentName } from "./openapi-components.js";

/** What the approval paths use of the document's builders. */
export interface PathBuilders {
  json(name: ComponentName, description: string): unknown;
  responseRef(name: string): unknown;
  parameterRef(name: string): unknown;
}

/** `POST /v1/approvals/{jobId}/approve` or `.../reject`. */
function decisionRoute(b: PathBuilders, approve: boolean) {
  return {
    post: {
      tags: ["approvals"],
      operationId: approve ? "approveJob" : "rejectJob",
      summary: approve
        ? "Approve the effects a run awaits a person for, bound to the recorded output"
        : "Reject a run awaiting approval: it ends dead (class rejected) with the reason",
      description:
        "The operator's token only (an agent's token: 403; no agent approves its own output). " +
        "The decision names the person (`actor`) and why (`reason`), is bound to the recorded " +
        "output's digest and the effects chosen, and is written with its event in one " +
        "transaction, durable before any approved effect is applied.",
      parameters: [b.parameterRef("jobId")],
      requestBody: {
        required: true,
        content: {
          "application/json": { schema: { $ref: "#/components/schemas/ApprovalDecisionBody" } },
        },
      },
      responses: {
        "200": b.json("ApprovalAnswer", "Decided and written."),
        "400": b.json("Error", "An invalid body (a blank reason or actor) or job ID."),
        "401": b.responseRef("Unauthorized"),
        "403": b.responseRef("Forbidden"),
        "404": b.json("Error", "No output or run for this job."),
        "409": b.json(
          "Error",
          "The run is not awaiting an approval (decided already, never gated), its request " +
            "expired, or the digest or effects are not those awaited: nothing decided.",
        ),
        "413": b.responseRef("PayloadTooLarge"),
        "415": b.responseRef("UnsupportedMediaType"),
        "421": b.responseRef("MisdirectedRequest"),
        "503": b.responseRef("JournalFailed"),
      },
    },
  };
}

/** The approval routes, by path. */
export function approvalPaths(b: PathBuilders): Record<string, unknown> {
  return {
    "/v1/approvals": {
      get: {
        tags: ["approvals"],
        operationId: "listApprovals",
        summary: "The runs awaiting a person's approval (at most 100, longest waiting first)",
        responses: {
          "200": b.json("AwaitingApprovals", "The runs awaiting."),
          "401": b.responseRef("Unauthorized"),
          "403": b.responseRef("Forbidden"),
          "421": b.responseRef("MisdirectedRequest"),
          "503": b.responseRef("JournalFailed"),
        },
      },
    },
    "/v1/approvals/{jobId}/approve": decisionRoute(b, true),
    "/v1/approvals/{jobId}/reject": decisionRoute(b, false),
  };
}
