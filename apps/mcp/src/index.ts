// @idem/mcp: idem's MCP server over @idem/core (docs/mcp.md), run by `idem mcp` and, for the
// agents configured with `agents.<name>.mcp`, by `idem executor`.
export type { McpAgentHost, McpAgentHostOptions, McpAgentSession } from "./agent-host.js";
export { createMcpAgentHost, MCP_AGENT_ENV } from "./agent-host.js";
export type { DraftChange, DraftState, DraftStore } from "./draft-store.js";
export { ATTEMPT_PATTERN, MemoryDraftStore } from "./draft-store.js";
export type { EffectTool, KindRegistry, ToolDefinition } from "./effect-tools.js";
export { EFFECT_TOOL_PREFIX, effectToolName, effectToolsOf } from "./effect-tools.js";
export { draftFolderName, FileDraftStore } from "./file-draft-store.js";
export type { McpHttpApp, McpHttpOptions, McpHttpServer } from "./http-server.js";
export { createMcpHttpApp, MCP_PATH, startMcpHttpServer } from "./http-server.js";
export type {
  DraftOutput,
  DraftView,
  FinishResult,
  StageIssue,
  StageResult,
} from "./job-draft.js";
export { JobDraft } from "./job-draft.js";
export type { FinishMode, McpContext, OperatorTools, SessionJob } from "./mcp-context.js";
export { clientNameOf, maxMessageBytes } from "./mcp-context.js";
export type { McpProcessOptions } from "./mcp-process.js";
export { runMcpProcess } from "./mcp-process.js";
export { resolveJob } from "./session-job.js";
export type { SessionLimits } from "./session-registry.js";
export { DEFAULT_SESSION_LIMITS } from "./session-registry.js";
export type { McpSession, SessionOptions } from "./session-server.js";
export { createSessionServer } from "./session-server.js";
export type { StdioStreams } from "./stdio-server.js";
export { bridgeStdioToHttp, serveMcpStdio } from "./stdio-server.js";
