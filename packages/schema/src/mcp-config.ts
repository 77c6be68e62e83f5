import { z } from "zod";

/**
 * What `mcp.operatorTools` lets an MCP session do beyond its job (docs/mcp.md, "Operators' tools"):
 * `off` nothing; `read` the dry-run replay plan, the audit and the dead letters; `write` those and
 * the tools that change the journal (replay, resolve), each with a reason.
 */
export const MCP_OPERATOR_TOOLS = ["off", "read", "write"] as const;

const mcpDefaults = {
  host: "127.0.0.1",
  port: 7072,
  operatorTools: "off",
  draftDir: ".idem/drafts",
} as const;

/**
 * `mcp`: the MCP server of `idem mcp` (docs/mcp.md). Over HTTP it listens on `host:port` behind
 * the API's token (`api.token`), and refuses to listen beyond loopback without one. The operators'
 * tools are offered only to a session bound to no job.
 */
export const McpConfigSchema = z
  .strictObject({
    host: z.string().min(1).default(mcpDefaults.host),
    port: z.number().int().min(0).max(65535).default(mcpDefaults.port),
    operatorTools: z.enum(MCP_OPERATOR_TOOLS).default(mcpDefaults.operatorTools),
    /**
     * Where `idem mcp` keeps each job's draft output until it is recorded (relative to the
     * config's folder), so a draft outlives the server process and the session.
     */
    draftDir: z.string().min(1).default(mcpDefaults.draftDir),
  })
  .default(mcpDefaults);
