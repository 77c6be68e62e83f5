import type { AgentGrant, Effects } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import type { Logger } from "@idem/runtime";
import type { Config } from "@idem/schema";
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
  /** The operators' tools offered; an agent the executor starts gets `off`. */
  operatorTools: OperatorTools;
  /**
   * The agent credential the session's token is (docs/security.md, "Credentials per agent"): its
   * effects are staged and recorded within that agent's scope only. Absent: the operator's.
   */
  grant?: AgentGrant | undefined;
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
