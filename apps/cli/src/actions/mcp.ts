import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { JournalStore } from "@idem/journal";
import {
  ATTEMPT_PATTERN,
  bridgeStdioToHttp,
  resolveJob,
  runMcpProcess,
  type SessionJob,
} from "@idem/mcp";
import { isIdemError } from "@idem/schema";
import type { Command } from "commander";
import {
  CliError,
  configPath,
  EXIT,
  loadConfig,
  loadConfigWithKinds,
  printJson,
  readText,
} from "../context.js";
import { personOf } from "../ops/person.js";
import { logFormatOption } from "../options.js";

interface McpCommandOptions {
  stdio?: boolean;
  http?: boolean;
  host?: string;
  port?: string;
  job?: string;
  agent?: string;
  attempt?: string;
  actor?: string;
  connect?: string;
  tokenFile?: string;
  logFormat?: string;
  clientConfig?: boolean;
}

/** `idem mcp`, imported when it runs (its options and help: commands/mcp.ts; docs/mcp.md). */
export async function runMcp(opts: McpCommandOptions, cmd: Command): Promise<void> {
  if (opts.connect !== undefined) return relay(opts);
  if (opts.tokenFile !== undefined)
    throw new CliError("--token-file goes with --connect", EXIT.USAGE);
  if (opts.stdio && opts.http) throw new CliError("--stdio or --http: choose one", EXIT.USAGE);
  if (opts.agent !== undefined && opts.job === undefined)
    throw new CliError("--agent names the agent of --job: give --job too", EXIT.USAGE);
  if (opts.attempt !== undefined && (opts.job === undefined || opts.http))
    throw new CliError(
      "--attempt names an attempt of --job over stdio (over HTTP: &attempt= on the URL)",
      EXIT.USAGE,
    );
  if (opts.attempt !== undefined && !ATTEMPT_PATTERN.test(opts.attempt))
    throw new CliError(
      "--attempt: 1 to 128 letters, digits, '.', '_', ':' or '-' (a run's ID, a timestamp)",
      EXIT.USAGE,
    );
  const http = opts.http === true;
  if (!http && (opts.host !== undefined || opts.port !== undefined))
    throw new CliError("--host and --port go with --http", EXIT.USAGE);
  if (opts.clientConfig) return printClientConfig(opts, cmd);
  const config = await loadConfigWithKinds(cmd.optsWithGlobals());
  const host = opts.host ?? config.mcp.host;
  const port = portOption(opts.port) ?? config.mcp.port;
  try {
    await runMcpProcess(config, {
      http,
      host,
      port,
      job: (journal) => jobOption(journal, opts),
      attemptId: opts.attempt,
      actor: `${personOf(opts.actor)} (mcp)`,
      logFormat: logFormatOption(opts.logFormat),
      onListening: (endpoint, job) => {
        const token = config.api.token;
        const agents = Object.values(config.credentials).filter((c) => c.tokenEnv !== null).length;
        const auth =
          token === null
            ? "no token"
            : `api.token required${agents > 0 ? `, or one of ${agents} agent token(s)` : ""}`;
        const bound = job ? `, job ${job.jobId}` : "";
        process.stdout.write(`idem mcp: ${endpoint} (${auth}${bound}); Ctrl-C stops it\n`);
      },
    });
  } catch (e) {
    // A superseded attempt, a draft of another agent: refused before the session starts.
    if (!http && isIdemError(e, "INVALID_STATE")) throw new CliError(e.message, EXIT.FAILED);
    if (http && (e as NodeJS.ErrnoException).code === "EADDRINUSE")
      throw new CliError(
        `${host}:${port} is taken (mcp.port, or --port; 0 picks a free one)`,
        EXIT.FAILED,
      );
    throw e;
  }
}

/**
 * `idem mcp --client-config`: the `mcpServers` entry that starts this same idem over stdio, with
 * absolute paths only (node, idem's script, the config): a desktop client starts its servers with
 * a PATH of its own, where `idem` (and the `node` its script names) may not be found
 * (`spawn idem ENOENT`).
 */
function printClientConfig(opts: McpCommandOptions, cmd: Command): void {
  if (opts.http)
    throw new CliError(
      "--client-config prints the stdio entry; for --http a client takes the URL (docs/mcp.md)",
      EXIT.USAGE,
    );
  const globals = cmd.optsWithGlobals();
  loadConfig(globals); // exit 2 here, not in the client, for a config that cannot load
  const script = realpathSync(resolve(process.argv[1] ?? "idem"));
  const args = [script, "mcp", "--config", configPath(globals)];
  if (opts.job !== undefined) args.push("--job", opts.job);
  if (opts.agent !== undefined) args.push("--agent", opts.agent);
  printJson({ mcpServers: { idem: { command: process.execPath, args } } });
}

/** `--port`, checked: undefined when not given. */
function portOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CliError("--port must be an integer from 0 to 65535", EXIT.USAGE);
  return port;
}

/** The job of `--job` (and `--agent`): refused (exit 2) when malformed or unknown without an agent. */
async function jobOption(
  journal: JournalStore,
  opts: McpCommandOptions,
): Promise<SessionJob | undefined> {
  if (opts.job === undefined) return undefined;
  try {
    return await resolveJob(journal, opts.job, opts.agent);
  } catch (e) {
    if (isIdemError(e, "INVALID_INPUT")) throw new CliError(`--job: ${e.message}`, EXIT.USAGE);
    throw e;
  }
}

/** `idem mcp --connect URL --token-file F`: the stdio relay to an executor's per-job endpoint. */
async function relay(opts: McpCommandOptions): Promise<void> {
  if (opts.tokenFile === undefined)
    throw new CliError("--connect needs --token-file (IDEM_MCP_COMMAND names both)", EXIT.USAGE);
  if (opts.http || opts.job !== undefined || opts.agent !== undefined)
    throw new CliError(
      "--connect relays to a job's endpoint: no --http, --job or --agent",
      EXIT.USAGE,
    );
  let url: URL;
  try {
    url = new URL(opts.connect as string);
  } catch {
    throw new CliError(`--connect: ${JSON.stringify(opts.connect)} is not a URL`, EXIT.USAGE);
  }
  const token = readText(opts.tokenFile, "token file").trim();
  if (token === "") throw new CliError(`token file ${opts.tokenFile} is empty`, EXIT.USAGE);
  await bridgeStdioToHttp({ url, token });
}
