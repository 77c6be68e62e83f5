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
import type { FinishMode, McpContext, SessionJob } from "./mcp-context.js";
import { operatorTools } from "./operator-tools.js";
import { type SessionTool, toolError, toolResult } from "./tool-results.js";

/** One MCP session's job and how its `finish` ends the draft. */
export interface SessionOptions {
  /** The job it stages effects for; without one, only the tools that need no job answer. */
  job?: SessionJob | undefined;
  finish: FinishMode;
  /**
   * The job's draft, shared by every session that passes it (an executor's agent may reconnect);
   * default a new one per session.
   */
  draft?: JobDraft | undefined;
}

/** An MCP session: the SDK server to connect to a transport, and its job's draft. */
export interface McpSession {
  readonly server: Server;
  /** The job's draft output (undefined for a session bound to no job). */
  readonly draft: JobDraft | undefined;
  /** Resolves once no tool call is in flight (a `finish` recording has answered). */
  settled(): Promise<void>;
}

/** The version the server names in `initialize` (the idem release it ships in). */
const SERVER_VERSION = "0.1.0";

/** What the client is told at `initialize`, for its model (MCP `instructions`). */
function instructionsOf(job: SessionJob | undefined, finish: FinishMode): string {
  const bound = job
    ? `This session works on idem job ${job.jobId} (agent ${job.agent}); job_input has what it asks.`
    : "This session is bound to no job: the effect tools and finish refuse until one is named (docs/mcp.md).";
  const end =
    finish === "record"
      ? "When done, call finish with a summary: it records the output, and from then on idem applies each effect once."
      : "When done, call finish with a summary and exit with code 0: the idem executor records your staged effects then. If you fail, nothing is applied and the job runs again.";
  return [
    "idem records side effects and applies each exactly once, whatever crashes or retries happen.",
    bound,
    "Each effect_* tool stages one effect in the job's draft output and answers its key; nothing happens at a target until the output is recorded. Never perform these effects any other way.",
    "An invalid effect is refused naming the field: correct it and call the tool again.",
    end,
  ].join(" ");
}

/** An effect tool bound to a session's draft: a call stages the effect and answers its key. */
function stagingTool(t: EffectTool, binding: JobBinding | undefined): SessionTool {
  const { kind, ...definition } = t;
  return {
    definition,
    async call(args) {
      if (!binding)
        return toolError(
          "this session is bound to no job: connect with the job's ID (idem mcp --job <id>, or ?job=<id> on the HTTP URL; docs/mcp.md)",
          { code: "INVALID_STATE" },
        );
      const r = binding.draft.stage({ ...args, kind });
      if (!r.ok) {
        const why = r.issues.map((i) => `${i.field || i.path || "(effect)"}: ${i.message}`);
        return toolError(
          `invalid ${kind} effect, nothing staged: ${why.join("; ")} (as the output's ${r.issues.map((i) => i.path || "(root)").join(", ")})`,
          { code: r.forbidden ? "FORBIDDEN" : "INVALID_INPUT", issues: r.issues },
        );
      }
      return toolResult(
        { key: r.key, index: r.index, kind, staged: binding.draft.size },
        `staged ${kind} as ${r.key} (${binding.draft.size} staged); idem applies it once the output is recorded`,
      );
    },
  };
}

/**
 * The MCP server of one session (docs/mcp.md): one tool per effect kind of `ctx.kinds`
 * (`effect_<kind>`), `finish`, `job_input`, `job_output`, `journal_status`, and the operators'
 * tools `ctx.operatorTools` allows. Every call answers; a refusal is a tool error
 * (`isError: true`) the model can read and correct; an unknown tool is a protocol error.
 * @throws IdemError INVALID_CONFIG when two kinds have the same tool name.
 */
export function createSessionServer(ctx: McpContext, options: SessionOptions): McpSession {
  const job = options.job;
  const draft = job
    ? (options.draft ?? new JobDraft(job.jobId, job.agent, ctx.config, ctx.kinds, ctx.grant))
    : undefined;
  const binding: JobBinding | undefined =
    job && draft ? { job, draft, finish: options.finish } : undefined;
  const tools = new Map<string, SessionTool>();
  for (const t of effectToolsOf(ctx.kinds, ctx.config)) tools.set(t.name, stagingTool(t, binding));
  for (const t of [...jobTools(ctx, binding), ...operatorTools(ctx)])
    tools.set(t.definition.name, t);

  const server = new Server(
    { name: "idem", title: "idem: exactly-once effects", version: SERVER_VERSION },
    {
      capabilities: { tools: { listChanged: false }, logging: {} },
      instructions: instructionsOf(job, options.finish),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map((t) => t.definition),
  }));
  const inFlight = new Set<Promise<unknown>>();
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.get(request.params.name);
    if (!tool)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name.slice(0, 100)}`,
      );
    const call = tool.call(request.params.arguments ?? {}, {
      clientName: server.getClientVersion()?.name,
    });
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
    settled: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
