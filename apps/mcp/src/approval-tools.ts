import { decideApproval } from "@idem/core";
import { systemClock } from "@idem/schema";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpContext } from "./mcp-context.js";
import {
  failureResult,
  inputSchemaOf,
  parseArguments,
  type SessionTool,
  type ToolCallContext,
  toolResult,
} from "./tool-results.js";

const DecisionArguments = z.strictObject({
  jobId: z.string().min(1).describe("The job whose run awaits a person's approval."),
  reason: z
    .string()
    .trim()
    .min(1)
    .max(2_000)
    .describe("Why, for the journal: kept with the decision and its event (--reason)."),
});
const ApproveArguments = DecisionArguments.extend({
  effects: z
    .array(z.number().int().nonnegative())
    .min(1)
    .optional()
    .describe("Only these effects, by index in the output (--effects); default all awaited."),
  digest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe("The output's digest as you saw it (approvals lists it): refused if it differs."),
});

async function answer(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (e) {
    return failureResult(e);
  }
}

const actorOf = (ctx: McpContext, call: ToolCallContext) =>
  call.clientName ? `${ctx.actor} via ${call.clientName}` : ctx.actor;

/** `approvals`: the runs awaiting a person (read). */
export function approvalsTool(ctx: McpContext): SessionTool {
  return {
    definition: {
      name: "approvals",
      title: "Runs awaiting approval",
      description:
        "The runs that wait for a person's approval before an effect (idem status's awaiting approval; docs/approvals.md): each with the effects awaited, the rules that matched, the output's digest and when the request expires. Changes nothing.",
      inputSchema: inputSchemaOf(z.strictObject({})),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    call: () =>
      answer(async () => toolResult({ awaiting: await ctx.journal.approvals.awaiting(100) })),
  };
}

/** `approve` or `reject`: a person's decision, with a reason (write). */
export function decisionTool(ctx: McpContext, approve: boolean): SessionTool {
  const schema = approve ? ApproveArguments : DecisionArguments;
  return {
    definition: {
      name: approve ? "approve" : "reject",
      title: approve ? "Approve awaited effects" : "Reject a run awaiting approval",
      description: approve
        ? "Approves the effects a run awaits a person for (idem approve): bound to the recorded output's digest, used once, recorded with the actor and reason; the interpreter then applies them once."
        : "Rejects a run awaiting approval (idem reject): it ends dead (class rejected) with the reason; nothing awaited is applied.",
      inputSchema: inputSchemaOf(schema),
      annotations: { readOnlyHint: false, destructiveHint: !approve, openWorldHint: true },
    },
    call: (args, call) =>
      answer(async () => {
        const parsed = parseArguments(schema, args);
        if (!parsed.ok) return parsed.result;
        const { jobId, reason, effects, digest } = parsed.value as z.infer<typeof ApproveArguments>;
        const actor = actorOf(ctx, call);
        const r = await decideApproval(ctx.journal, ctx.config.approvals, systemClock, {
          jobId,
          approve,
          reason,
          actor,
          effects,
          digest,
        });
        ctx.logger?.info({ actor, jobId, decision: r.decision }, "mcp approval decision");
        return toolResult(r, `${jobId}: ${r.decision} (actor ${actor})`);
      }),
  };
}
