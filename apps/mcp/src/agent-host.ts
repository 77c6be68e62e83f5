import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kindsOf } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import type { Logger } from "@idem/runtime";
import type { Config, Job } from "@idem/schema";
import { MemoryDraftStore } from "./draft-store.js";
import { startMcpHttpServer } from "./http-server.js";
import { type DraftOutput, JobDraft } from "./job-draft.js";

/** The variables an MCP agent gets (docs/mcp.md, "Agents the executor starts"). */
export const MCP_AGENT_ENV = {
  /** The per-job Streamable HTTP endpoint: `http://127.0.0.1:<port>/mcp`. */
  url: "IDEM_MCP_URL",
  /** Its bearer token, a secret for this job alone. */
  token: "IDEM_MCP_TOKEN",
  /** A JSON array: the command line of a stdio server relaying to the endpoint (`idem mcp --connect`). */
  command: "IDEM_MCP_COMMAND",
} as const;

/** One MCP agent's run: what it reaches the server with, and its draft output. */
export interface McpAgentSession {
  /** The variables to add to the agent's environment (see {@link MCP_AGENT_ENV}). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Ends staging (a later call is refused) and answers the draft: the job, its agent, the summary
   * `finish` gave and the staged effects in order.
   */
  seal(): Promise<DraftOutput>;
  /** Stops serving and forgets the secret and the draft. Idempotent. */
  close(): Promise<void>;
}

/** What an executor asks of its MCP host: a server bound to one job, per run. */
export interface McpAgentHost {
  open(job: Job, log?: Logger): Promise<McpAgentSession>;
}

/** What the host serves from. */
export interface McpAgentHostOptions {
  config: Config;
  journal: JournalStore;
  /** The command line that runs this idem, up to its arguments (`[node, …/bin/idem.js]`). */
  idem: readonly string[];
  /** Who the records name (the executor's owner ID). */
  actor: string;
}

/**
 * The executor's MCP host (docs/mcp.md, "Agents the executor starts"): for each run of an agent
 * with `agents.<name>.mcp`, a Streamable HTTP server on 127.0.0.1 (a free port) bound to that job,
 * behind a secret made for this run, with the job's tools only (no operators' tools). The agent
 * gets the endpoint and the secret in its environment, and `IDEM_MCP_COMMAND` for a client that
 * starts stdio servers: `idem mcp --connect <url> --token-file <file>`, the file readable by this
 * user only (a secret on a command line would be visible to every user of the host). Every
 * session of the run shares one draft; `finish` ends it, and the executor records it after the
 * agent exits 0 (`seal`). `close` ends the server and removes the secret's file: a later request
 * with it finds nothing.
 */
export function createMcpAgentHost(options: McpAgentHostOptions): McpAgentHost {
  const { config, journal } = options;
  return {
    async open(job, log) {
      const kinds = kindsOf(config);
      // This run's draft, in memory: every session of the run shares it, the next run starts empty.
      const drafts = new MemoryDraftStore();
      const secret = randomBytes(32).toString("base64url");
      const dir = mkdtempSync(join(tmpdir(), "idem-mcp-"));
      const tokenFile = join(dir, "token");
      let server: Awaited<ReturnType<typeof startMcpHttpServer>>;
      try {
        writeFileSync(tokenFile, secret, { mode: 0o600 });
        server = await startMcpHttpServer({
          context: {
            config,
            kinds,
            journal,
            actor: options.actor,
            operatorTools: "off",
            drafts,
            logger: log,
          },
          token: secret,
          host: "127.0.0.1",
          port: 0,
          job: { jobId: job.jobId, agent: job.agent, input: job.input },
          finish: "seal",
        });
      } catch (e) {
        rmSync(dir, { recursive: true, force: true });
        throw e;
      }
      let closed: Promise<void> | undefined;
      return {
        env: {
          [MCP_AGENT_ENV.url]: server.endpoint,
          [MCP_AGENT_ENV.token]: secret,
          [MCP_AGENT_ENV.command]: JSON.stringify([
            ...options.idem,
            "mcp",
            "--connect",
            server.endpoint,
            "--token-file",
            tokenFile,
          ]),
        },
        async seal() {
          const draft = await JobDraft.join(drafts, job, config, kinds);
          return draft.seal();
        },
        close() {
          closed ??= server.close().finally(() => rmSync(dir, { recursive: true, force: true }));
          return closed;
        },
      };
    },
  };
}
