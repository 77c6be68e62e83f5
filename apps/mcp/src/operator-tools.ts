import {
  buildAudit,
  buildReplayPlan,
  checkEffectFilter,
  createReplayRuns,
  type Effects,
  listDeadLetters,
  replayPlanJson,
  resolveUncertain,
} from "@idem/core";
import type { ReplaySelection } from "@idem/journal";
import { RUN_STATES } from "@idem/schema";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { approvalsTool, decisionTool } from "./approval-tools.js";
import type { McpContext } from "./mcp-context.js";
import {
  failureResult,
  inputSchemaOf,
  parseArguments,
  type SessionTool,
  type ToolCallContext,
  toolError,
  toolResult,
} from "./tool-results.js";

const names = z.array(z.string().min(1)).min(1);
const reason = z
  .string()
  .trim()
  .min(1)
  .max(2_000)
  .describe("Why, for the journal: kept with the change and its event, as on the CLI (--reason).");

/** What to replay, as `idem replay` takes it (docs/cli.md): a selection and an effect filter. */
const ReplayArguments = z.strictObject({
  jobIds: names.optional().describe("These jobs' outputs (--job)."),
  agent: z.string().min(1).optional().describe("The outputs of this agent (--agent)."),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .describe("Outputs recorded at or after this ISO-8601 time (--since)."),
  state: z
    .enum(RUN_STATES)
    .optional()
    .describe("Outputs whose latest run is in this state (--state)."),
  all: z.boolean().optional().describe("Every output (--all)."),
  kinds: names.optional().describe("Only effects of these kinds (--kind)."),
  repos: names.optional().describe("Only effects on these repos (--repo)."),
  roots: names.optional().describe("Only effects under these roots (--root)."),
  targets: names.optional().describe("Only effects on these targets (--target)."),
  forceUnprobeable: z
    .boolean()
    .optional()
    .describe("Send again the effects that cannot be probed and were sent (--force-unprobeable)."),
});
const ReplayWithReason = ReplayArguments.extend({ reason });
const AuditArguments = z.strictObject({
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .describe("Count only what happened at or after this ISO-8601 time (--since)."),
});
const ResolveArguments = z.strictObject({
  jobId: z.string().min(1).describe("The job whose dead run has an open effect."),
  decision: z
    .enum(["applied", "skipped"])
    .describe(
      "applied: it happened (a probe confirms it where the kind can tell); skipped: it did not and must not be sent.",
    ),
  reason,
});

type Replay = z.infer<typeof ReplayArguments>;

/** The selection and filter of a replay, or a tool error naming what is missing or unknown. */
function requestOf(ctx: McpContext, a: Replay) {
  const selection: ReplaySelection = {
    ...(a.jobIds && { jobIds: a.jobIds }),
    ...(a.agent !== undefined && { agent: a.agent }),
    ...(a.since !== undefined && { since: Date.parse(a.since) }),
    ...(a.state !== undefined && { state: a.state }),
    ...(a.all && { all: true }),
  };
  if (Object.keys(selection).length === 0)
    throw toolError("choose what to replay: jobIds, agent, since, state or all", {
      code: "INVALID_INPUT",
    });
  const only = checkEffectFilter(
    {
      ...(a.kinds && { kinds: a.kinds }),
      ...(a.repos && { repos: a.repos }),
      ...(a.roots && { roots: a.roots }),
      ...(a.targets && { targets: a.targets }),
    },
    ctx.kinds,
  );
  return { selection, only, forceUnprobeable: a.forceUnprobeable ?? false };
}

/** Runs a tool's body: a thrown tool error is its answer, any other failure a tool error with its code. */
async function answer(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (e) {
    if (typeof e === "object" && e !== null && "isError" in e) return e as CallToolResult;
    return failureResult(e);
  }
}

const actorOf = (ctx: McpContext, call: ToolCallContext) =>
  call.clientName ? `${ctx.actor} via ${call.clientName}` : ctx.actor;

/**
 * The operators' tools (docs/mcp.md, "Operators' tools"), as `mcp.operatorTools` allows: `read`
 * the dry-run replay plan, the audit, the dead letters and the runs awaiting approval; `write`
 * also `replay`, `resolve`, `approve` and `reject`, each with a reason, recorded with the actor as on the CLI. None without `effects`.
 */
export function operatorTools(ctx: McpContext): SessionTool[] {
  const effects = ctx.effects;
  if (ctx.operatorTools === "off" || effects === undefined) return [];
  const read: SessionTool[] = [
    replayPlanTool(ctx, effects),
    auditTool(ctx, effects),
    deadLettersTool(ctx),
    approvalsTool(ctx),
  ];
  return ctx.operatorTools === "write"
    ? [
        ...read,
        replayTool(ctx, effects),
        resolveTool(ctx, effects),
        decisionTool(ctx, true),
        decisionTool(ctx, false),
      ]
    : read;
}

function replayPlanTool(ctx: McpContext, effects: Effects): SessionTool {
  return {
    definition: {
      name: "replay_plan",
      title: "Replay plan (dry run)",
      description:
        "What a replay of the selected outputs would do with each effect, from the interpreter's own decision and a probe of each target (idem replay --dry-run --json). Changes nothing.",
      inputSchema: inputSchemaOf(ReplayArguments),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    call: (args) =>
      answer(async () => {
        const parsed = parseArguments(ReplayArguments, args);
        if (!parsed.ok) return parsed.result;
        const r = requestOf(ctx, parsed.value);
        const plan = await buildReplayPlan({
          journal: ctx.journal,
          effects,
          ...r,
        });
        return toolResult(replayPlanJson(plan));
      }),
  };
}

function auditTool(ctx: McpContext, effects: Effects): SessionTool {
  return {
    definition: {
      name: "audit",
      title: "Audit",
      description:
        "Reconciles the journal with its targets (idem audit --json): counts, duplicates at the targets, drift. Changes nothing.",
      inputSchema: inputSchemaOf(AuditArguments),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    call: (args) =>
      answer(async () => {
        const parsed = parseArguments(AuditArguments, args);
        if (!parsed.ok) return parsed.result;
        const since = parsed.value.since === undefined ? undefined : Date.parse(parsed.value.since);
        return toolResult(await buildAudit(ctx.config, ctx.journal, effects, since));
      }),
  };
}

function deadLettersTool(ctx: McpContext): SessionTool {
  return {
    definition: {
      name: "dead_letters",
      title: "Dead letters",
      description:
        "What waits for a person (idem dlq ls --json): dead runs with their open effects, the uncertain effects, the jobs that never produced an output.",
      inputSchema: inputSchemaOf(z.strictObject({})),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    call: () => answer(async () => toolResult(await listDeadLetters(ctx.journal))),
  };
}

function replayTool(ctx: McpContext, effects: Effects): SessionTool {
  return {
    definition: {
      name: "replay",
      title: "Replay",
      description:
        "Creates a new run generation for each selected output (idem replay --yes): its interpreter decides every effect again and probes the targets, so no effect is applied twice. Needs a reason.",
      inputSchema: inputSchemaOf(ReplayWithReason),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    call: (args, call) =>
      answer(async () => {
        const parsed = parseArguments(ReplayWithReason, args);
        if (!parsed.ok) return parsed.result;
        const r = requestOf(ctx, parsed.value);
        const plan = await buildReplayPlan({
          journal: ctx.journal,
          effects,
          ...r,
        });
        const actor = actorOf(ctx, call);
        const created = await createReplayRuns(ctx.journal, plan, {
          actor,
          reason: parsed.value.reason,
          forceUnprobeable: r.forceUnprobeable,
        });
        ctx.logger?.info({ actor, runs: created.length }, "mcp replay");
        return toolResult(
          {
            created: created.map((run) => ({ jobId: run.jobId, generation: run.generation })),
            plan: replayPlanJson(plan),
          },
          `created ${created.length} run generation(s) (actor ${actor})`,
        );
      }),
  };
}

function resolveTool(ctx: McpContext, effects: Effects): SessionTool {
  return {
    definition: {
      name: "resolve",
      title: "Resolve an open effect",
      description:
        "A person's decision on the open effect of a dead run (idem dlq resolve): applied or skipped, with a reason; the run then goes on with the rest.",
      inputSchema: inputSchemaOf(ResolveArguments),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    call: (args, call) =>
      answer(async () => {
        const parsed = parseArguments(ResolveArguments, args);
        if (!parsed.ok) return parsed.result;
        const { jobId, decision, reason: why } = parsed.value;
        const actor = actorOf(ctx, call);
        const r = await resolveUncertain(
          ctx.journal,
          jobId,
          { decision, reason: why, actor },
          effects,
        );
        return toolResult(r, `resolved ${r.effect.key} as ${r.effect.state} (actor ${actor})`);
      }),
  };
}
