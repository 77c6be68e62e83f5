import { resolve } from "node:path";
import { runExecutorProcess } from "@idem/executor";
import type { JournalStore } from "@idem/journal";
import { type Config, createFaultHook, type FaultPoint } from "@idem/schema";
import type { Command } from "commander";
import { CliError, EXIT, loadConfig } from "../context.js";
import { graceOption, logFormatOption } from "../options.js";

/**
 * The MCP host for the agents with `agents.<name>.mcp` (docs/mcp.md), undefined when none has it
 * (@idem/mcp and the MCP SDK are then not loaded). Their relay command runs this same idem.
 */
async function mcpHostOf(config: Config, journal: JournalStore) {
  if (!Object.values(config.agents).some((a) => a.mcp)) return undefined;
  const { createMcpAgentHost } = await import("@idem/mcp");
  const idem = [process.execPath, resolve(process.argv[1] ?? "idem")];
  return createMcpAgentHost({ config, journal, idem, actor: "executor (mcp)" });
}

/** `idem executor`, imported when it runs (its options and help: commands/executor.ts). */
export async function runExecutor(
  opts: { host?: string; port?: string; api?: boolean; logFormat?: string; grace?: string },
  cmd: Command,
): Promise<void> {
  const logFormat = logFormatOption(opts.logFormat);
  const config = loadConfig(cmd.optsWithGlobals());
  const graceMs = graceOption(opts.grace) ?? config.queue.stopGraceMs;
  if (Object.keys(config.agents).length === 0 && opts.api === false && !config.nats) {
    throw new CliError(
      "nothing to do: no agents configured (agents.<name>) and --no-api (an executor without agents serves only the submit API)",
      EXIT.USAGE,
    );
  }
  let port: number | undefined;
  if (opts.port !== undefined) {
    port = Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliError(`--port ${opts.port} is not a port`, EXIT.USAGE);
  }
  await runExecutorProcess(config, {
    api: opts.api !== false,
    host: opts.host,
    port,
    graceMs,
    logFormat,
    fault: faultHook(),
    mcpHost: (journal) => mcpHostOf(config, journal),
  });
}

/** The fault hook `IDEM_FAULT` names (docs/reliability.md): a SIGKILL of this process there. */
export function faultHook(): (p: FaultPoint) => void {
  try {
    return createFaultHook(process.env.IDEM_FAULT, () => process.kill(process.pid, "SIGKILL"));
  } catch (e) {
    throw new CliError((e as Error).message, EXIT.USAGE);
  }
}
