import type { Effects } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import type { Tracing } from "@idem/runtime";
import type { Config } from "@idem/schema";
import type { Context } from "hono";
import type { ConsoleAuth } from "./auth.js";
import type { BackgroundAuditState } from "./background-audit.js";
import type { InterpreterWatch } from "./interpreter-watch.js";
import type { Shell } from "./layout.js";
import type { SharedOverview } from "./shared-overview.js";

/** A replay the console created, kept so its progress page can follow it. */
export interface CreatedReplay {
  actor: string;
  reason: string;
  at: number;
  runs: { jobId: string; generation: number }[];
}

/** What every route of the console works with. */
export interface ConsoleDeps {
  config: Config;
  journal: JournalStore;
  /** The effects façade (`openEffects`): the replay plan's probes, resolve's probe, the audit. */
  effects: Effects;
  /** The actor forms offer by default. */
  actor: string;
  readOnly: boolean;
  auth: ConsoleAuth;
  /** The overview every viewer shares (see SharedOverview). */
  overview: SharedOverview;
  /** The background audit's period and last failure; null when `console.auditIntervalMs` is null. */
  audit: BackgroundAuditState | null;
  /** Whether runs wait with no interpreter taking them (the overview's and progress page's warning). */
  interpreters: InterpreterWatch;
  tracing?: Tracing;
  now: () => number;
  /** Live pages poll every this many ms. */
  liveMs: number;
  replays: Map<string, CreatedReplay>;
  shell(c: Context): Shell;
  /** The CSRF token of the request's session, for the forms of a page. */
  csrf(c: Context): string;
}

/** Whether the caller asked for the page's data as JSON (`?format=json` or `Accept: application/json`). */
export function wantsJson(c: Context): boolean {
  if (c.req.query("format") === "json") return true;
  const accept = c.req.header("accept") ?? "";
  return accept.includes("application/json") && !accept.includes("text/html");
}
