import type { Command } from "commander";
import { LOG_FORMAT_HELP } from "../help-text.js";
import { lazyAction } from "../lazy-action.js";

/**
 * Registers `idem mcp`: the MCP server whose tools are the config's effect kinds (docs/mcp.md),
 * over stdio (the default: for a client that starts its servers as commands) or Streamable HTTP
 * (`--http`, on `mcp.host`:`mcp.port` behind `api.token`); `--connect` is the stdio relay the
 * executor hands its MCP agents (`IDEM_MCP_COMMAND`).
 */
export function register(program: Command): void {
  program
    .command("mcp")
    .description(
      "serves the MCP server whose tools stage effects of the config's kinds in a job's output (over stdio, or --http)",
    )
    .option("--stdio", "serve one session on stdin/stdout (the default)")
    .option("--http", "serve Streamable HTTP on mcp.host:mcp.port at /mcp, behind api.token")
    .option("--host <host>", "with --http: listen on this host (default: mcp.host, 127.0.0.1)")
    .option(
      "--port <n>",
      "with --http: listen on this port (default: mcp.port, 7072; 0 picks a free one)",
    )
    .option("--job <id>", "the job whose output the session stages (with --http: every session's)")
    .option("--agent <name>", "the job's agent, for a job this journal has not enqueued")
    .option(
      "--attempt <id>",
      "with --job: the attempt this session works in; a name not seen before starts the job's draft again (an agent run again from the start). Default: resume the current one",
    )
    .option("--actor <name>", "who records and acts (default $IDEM_ACTOR or $USER)")
    .option(
      "--connect <url>",
      "relay stdio to an executor's per-job MCP endpoint (what IDEM_MCP_COMMAND runs); needs --token-file",
    )
    .option("--token-file <file>", "with --connect: the file holding the endpoint's bearer token")
    .option(
      "--client-config",
      "print the mcpServers entry that starts this idem over stdio, with absolute paths (for Claude Desktop, Cursor, VS Code)",
    )
    .option("--log-format <format>", LOG_FORMAT_HELP)
    .action(lazyAction(async () => (await import("../actions/mcp.js")).runMcp));
}
