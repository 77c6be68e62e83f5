import type { AgentGrant, Effects } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import type { Logger } from "@idem/runtime";
import type { Config } from "@idem/schema";
import type { DraftStore } from "./draft-store.js";
import type { KindRegistry } from "./effect-tools.js";

/** What `mcp.operatorTools` offers (docs/mcp.md, "Operators' tools"). */
export type OperatorTools = Config["mcp"]["operatorTools"];

/** What every session of one MCP server works with. */
export interface McpContext {
  config: Config;
  /** The kinds the config can use (`loadKinds`): one tool each. */
  kinds: KindRegistry;
  journal: JournalStore;
  /** Who records an output and acts with an operator's tool (`oncall (mcp)`). */
  actor: string;
  /**
   * The operators' tools offered to a session bound to no job (an operator's); a session bound
   * to a job never gets them, whatever this says.
   */
  operatorTools: OperatorTools;
  /**
   * The agent credential the session's token is (docs/security.md, "Credentials per agent"): its
   * effects are staged and recorded within that agent's scope only. Absent: the operator's.
   */
  grant?: AgentGrant | undefined;
  /** Where the jobs' drafts are kept: `idem mcp`'s on disk (`mcp.draftDir`), an executor run's in memory. */
  drafts: DraftStore;
  /** The effects façade (`openEffects`), for the operators' tools that probe targets. */
  effects?: Effects | undefined;
  logger?: Logger | undefined;
}

/** The job a session stages effects for. */
export interface SessionJob {
  jobId: string;
  /** The job's agent, recorded with its output. */
  agent: string;
  /** The job's input when the server knows it (the executor's job); else the journal's job row. */
  input?: unknown;
}

/**
 * What `finish` does: `record` records the output through core's `recordOutput` (`idem mcp`);
 * `seal` ends the draft, which the executor records once the agent exits 0 (docs/mcp.md).
 */
export type FinishMode = "record" | "seal";

/**
 * The largest JSON-RPC message a session takes, over HTTP (413 beyond) and stdio (a JSON-RPC
 * error beyond): a call carries one effect, at most as large as an output may be, so twice
 * `limits.maxOutputBytes` and never less than 4 MiB.
 */
export function maxMessageBytes(config: Config): number {
  return Math.max(4 * 1_048_576, 2 * config.limits.maxOutputBytes);
}

/**
 * A client's self-reported name (`initialize`'s `clientInfo.name`) as idem keeps it in an actor:
 * printable characters only, at most 64.
 */
export function clientNameOf(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const clean = name
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, "")
    .trim();
  if (clean === "") return undefined;
  return clean.length > 64 ? `${clean.slice(0, 63)}…` : clean;
}
