import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { EFFECT_TOOL_PREFIX, type EffectTool, effectToolsOf } from "./effect-tools.js";
import { JobDraft } from "./job-draft.js";
import { type JobBinding, jobTools } from "./job-tools.js";
import { clientNameOf, type FinishMode, type McpContext, type SessionJob } from "./mcp-context.js";
import { operatorTools } from "./operator-tools.js";
import { failureResult, type SessionTool, toolError, toolResult } from "./tool-results.js";

/** One MCP session's job and how its `finish` ends the draft. */
export interface SessionOptions {
  /** The job it stages effects for; without one, only the tools that need no job answer. */
  job?: SessionJob | undefined;
  finish: FinishMode;
  /**
   * The attempt the client names (`idem mcp --attempt`, `?attempt=` on the HTTP URL): a name
   * not seen before begins a new attempt of the job (its draft empty). None: the job's current
   * attempt, resumed (docs/mcp.md, "Drafts and attempts").
   */
  attemptId?: string | undefined;
}

/** An MCP session: the SDK server to connect to a transport, and its job's draft. */
export interface McpSession {
  readonly server: Server;
  /** The session's hold on its job's draft (undefined for a session bound to no job). */
  readonly draft: JobDraft | undefined;
  /** Whether a tool call is in flight. */
  busy(): boolean;
  /** Resolves once no tool call is in flight (a `finish` recording has answered). */
  settled(): Promise<void>;
}

/** The version the server names in `initialize` (the idem release it ships in). */
const SERVER_VERSION = "0.1.0";

/** What the session's draft holds when it starts, for the instructions. */
interface DraftAtStart {
  attempt: number;
  staged: number;
  finished: boolean;
  recorded: boolean;
}

/** What the client is told at `initialize`, for its model (MCP `instructions`). */
function instructionsOf(
  job: SessionJob | undefined,
  finish: FinishMode,
  draft: DraftAtStart | undefined,
): string {
  const bound = job
    ? [
        `This session works on idem job ${job.jobId} (agent ${job.agent})${draft && draft.attempt > 1 ? `, attempt ${draft.attempt}` : ""}.`,
        job.input !== undefined
          ? "job_input has what it asks."
          : "Its input is not in idem's journal: the task is what you were asked.",
      ]
    : [
        "This session is bound to no job: the effect tools and finish refuse until one is named (docs/mcp.md).",
      ];
  const earlier =
    draft?.recorded || draft?.finished
      ? [
          `This job's output is already ${draft.recorded ? "recorded" : "finished"}: nothing more can be staged.`,
        ]
      : draft && draft.staged > 0
        ? [
            `${draft.staged} effect(s) are already staged in this job's draft by an earlier session: job_output lists them. Do not stage them again; stage only what is still missing.`,
          ]
        : [];
  const end =
    finish === "record"
      ? "When done, call finish with a summary: it records the output, and from then on idem applies each effect once."
      : "When done, call finish with a summary and exit with code 0: the idem executor records your staged effects then. If you fail, nothing is applied and the job runs again.";
  return [
    "idem records side effects and applies each exactly once, whatever crashes or retries happen.",
    ...bound,
    ...earlier,
    "Each effect_* tool stages one effect in the job's draft output and answers its key; nothing happens at a target until the output is recorded. Never perform these effects any other way.",
    "An invalid effect is refused naming the field: correct it and call the tool again.",
    end,
  ].join(" ");
}

/** An effect tool bound to a session's draft: a call stages the effect and answers its key. */
function stagingTool(ctx: McpContext, t: EffectTool, binding: JobBinding | undefined): SessionTool {
  const { kind, ...definition } = t;
  return {
    definition,
    async call(args) {
      if (!binding)
        return toolError(
          "this session is bound to no job: connect with the job's ID (idem mcp --job <id>, or ?job=<id> on the HTTP URL; docs/mcp.md)",
          { code: "INVALID_STATE" },
        );
      const { job, draft } = binding;
      try {
        // First write wins: once the job's output is recorded, nothing staged could be.
        if (await ctx.journal.outputs.has(job.jobId))
          return toolError(
            `conflict: job ${job.jobId}'s output is already recorded; nothing more can be staged for it (first write wins; job_output shows it)`,
            { status: "conflict", jobId: job.jobId, code: "OUTPUT_CONFLICT" },
          );
        const r = await draft.stage({ ...args, kind });
        if (!r.ok) {
          const why = r.issues.map((i) => `${i.field || i.path || "(effect)"}: ${i.message}`);
          if (r.code === "INVALID_STATE")
            return toolError(`nothing staged: ${why.join("; ")}`, {
              code: r.code,
              issues: r.issues,
            });
          return toolError(
            `invalid ${kind} effect, nothing staged: ${why.join("; ")} (as the output's ${r.issues.map((i) => i.path || "(root)").join(", ")})`,
            { code: r.code, issues: r.issues },
          );
        }
        return toolResult(
          { key: r.key, index: r.index, kind, staged: r.staged, attempt: draft.attempt },
          `staged ${kind} as ${r.key} (${r.staged} staged); idem applies it once the output is recorded`,
        );
      } catch (e) {
        return failureResult(e);
      }
    },
  };
}

/**
 * The MCP server of one session (docs/mcp.md): one tool per effect kind of `ctx.kinds`
 * (`effect_<kind>`), `finish`, `job_input`, `job_output`, `journal_status`, and the operators'
 * tools `ctx.operatorTools` allows in a session bound to no job. Every call answers, one at a time
 * in the order received; a refusal is a tool error (`isError: true`) the model can read and
 * correct; an unknown tool is a protocol error.
 * @throws IdemError INVALID_CONFIG when two kinds have the same tool name.
 */
export async function createSessionServer(
  ctx: McpContext,
  options: SessionOptions,
): Promise<McpSession> {
  const job = options.job;
  const draft = job
    ? await JobDraft.join(ctx.drafts, job, ctx.config, ctx.kinds, options.attemptId, ctx.grant)
    : undefined;
  const view = await draft?.view();
  const binding: JobBinding | undefined =
    job && draft ? { job, draft, finish: options.finish } : undefined;
  const tools = new Map<string, SessionTool>();
  for (const t of effectToolsOf(ctx.kinds, ctx.config))
    tools.set(t.name, stagingTool(ctx, t, binding));
  // An operator's tools only where no agent's job is: a session bound to a job never has them.
  for (const t of [...jobTools(ctx, binding), ...(job ? [] : operatorTools(ctx))])
    tools.set(t.definition.name, t);

  const server = new Server(
    { name: "idem", title: "idem: exactly-once effects", version: SERVER_VERSION },
    {
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions: instructionsOf(
        job,
        options.finish,
        view && {
          attempt: view.attempt,
          staged: view.effects.length,
          finished: view.finished,
          recorded: view.recorded,
        },
      ),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map((t) => t.definition),
  }));
  const inFlight = new Set<Promise<unknown>>();
  // A session's calls run one at a time, in the order they came: a client that writes a staging
  // call and `finish` without waiting between them (a shell pipe) gets them in that order.
  let turn: Promise<unknown> = Promise.resolve();
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.get(request.params.name);
    if (!tool)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name.slice(0, 100)}`,
      );
    const context = { clientName: clientNameOf(server.getClientVersion()?.name) };
    const call = turn.then(() => tool.call(request.params.arguments ?? {}, context));
    turn = call.catch(() => {});
    inFlight.add(call);
    const result = await call.finally(() => inFlight.delete(call));
    const name = request.params.name;
    if (!result.isError && (name === "finish" || name.startsWith(EFFECT_TOOL_PREFIX))) {
      // What changed in the draft, as a log message at info (MCP logging; logging/setLevel
      // filters it): a client may show it beside the model's calls.
      void server
        .sendLoggingMessage({
          level: "info",
          logger: "idem",
          data: { tool: name, ...result.structuredContent },
        })
        .catch(() => {});
    }
    return result;
  });
  return {
    server,
    draft,
    busy: () => inFlight.size > 0,
    settled: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
