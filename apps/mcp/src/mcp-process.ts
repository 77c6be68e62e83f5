import {
  type Credentials,
  kindsOf,
  openEffects,
  openVerifiedJournal,
  resolveCredentials,
} from "@idem/core";
import type { JournalStore } from "@idem/journal";
import { assertListenAllowed, createLogger, type LogFormat, onStopSignal } from "@idem/runtime";
import type { Config } from "@idem/schema";
import { FileDraftStore } from "./file-draft-store.js";
import { startMcpHttpServer } from "./http-server.js";
import type { McpContext, SessionJob } from "./mcp-context.js";
import { serveMcpStdio } from "./stdio-server.js";

/** How `idem mcp` runs this process (its command-line options, parsed). */
export interface McpProcessOptions {
  /** Streamable HTTP on `host:port` (until SIGINT or SIGTERM); otherwise stdio. */
  http: boolean;
  host: string;
  port: number;
  /** The job the sessions are bound to, read from the open journal (undefined: an operator's). */
  job(journal: JournalStore): Promise<SessionJob | undefined>;
  /** Over stdio: the attempt of the job this session is. */
  attemptId?: string | undefined;
  /** Who records an output and acts with an operator's tool (`oncall (mcp)`). */
  actor: string;
  logFormat?: LogFormat | undefined;
  /** Told the endpoint once the HTTP server listens (the CLI prints it). */
  onListening?(endpoint: string, job: SessionJob | undefined): void;
}

/**
 * The MCP server's composition root: over HTTP the listen rule and every agent's token checked
 * before anything opens; the journal verified; the targets opened only for the operators' tools
 * (a session bound to no job); then one stdio session, or the HTTP server until a stop signal.
 * @throws the listen rule's or the credentials' refusal; INTEGRITY for a damaged journal;
 * INVALID_STATE for a stdio session refused before it starts; EADDRINUSE for a port taken.
 */
export async function runMcpProcess(config: Config, options: McpProcessOptions): Promise<void> {
  if (options.http)
    assertListenAllowed({
      what: "the MCP server",
      host: options.host,
      token: config.api.token,
      hostKey: "mcp.host",
    });
  // Every agent's token is read before anything opens: a variable unset is refused, naming it.
  const credentials = options.http ? resolveCredentials(config, process.env) : undefined;
  // Logs go to stderr: over stdio, stdout carries the protocol alone.
  const logger = createLogger({ name: "idem-mcp", format: options.logFormat });
  const journal = await openVerifiedJournal(config);
  let effects: McpContext["effects"];
  try {
    const job = await options.job(journal);
    // The targets are opened only for the operators' tools (plan, audit, resolve's probe), which
    // only a session bound to no job has.
    if (job === undefined && config.mcp.operatorTools !== "off") effects = openEffects(config);
    const context: McpContext = {
      config,
      kinds: kindsOf(config),
      journal,
      actor: options.actor,
      operatorTools: config.mcp.operatorTools,
      drafts: new FileDraftStore(config.mcp.draftDir),
      effects,
      logger,
    };
    if (!options.http) {
      await serveMcpStdio(context, { job, finish: "record", attemptId: options.attemptId });
      return;
    }
    await serveUntilStopped(context, options, job, credentials as Credentials);
  } finally {
    await effects?.close();
    await journal.close();
  }
}

/** `idem mcp --http`: serves until SIGINT or SIGTERM, then ends every session. */
async function serveUntilStopped(
  context: McpContext,
  options: McpProcessOptions,
  job: SessionJob | undefined,
  credentials: Credentials,
): Promise<void> {
  const server = await startMcpHttpServer({
    context,
    token: context.config.api.token,
    credentials,
    host: options.host,
    port: options.port,
    job,
    finish: "record",
  });
  options.onListening?.(server.endpoint, job);
  context.logger?.info(
    { url: server.endpoint, operatorTools: context.config.mcp.operatorTools },
    "MCP server listening",
  );
  await new Promise<void>((resolve) => {
    const dispose = onStopSignal(() => {
      dispose();
      resolve();
    });
  });
  await server.close();
}
