import type { KindRegistry } from "@idem/effects";
import { type EventRecord, JOURNAL_EVENTS, type JournalStore } from "@idem/journal";
import { type Config, type EffectSpec, effectKey } from "@idem/schema";
import { approvalReasons } from "./approval-rules.js";

/** What the interpreter's gate needs of the config: the `approvals` section. */
export type ApprovalSettings = Config["approvals"];

/** An approval as its `approval.granted` event holds it. */
export interface GrantedApproval {
  generation: number;
  digest: string;
  effects: number[];
  expiresAt: number;
  actor: string;
  reason: string;
  at: number;
}

/** The approval an `approval.granted` event records, or undefined for one that is not well-formed. */
export function approvalGrantOf(e: EventRecord): GrantedApproval | undefined {
  const d = e.data ?? {};
  const { generation, digest, effects, expiresAt, reason } = d;
  if (typeof generation !== "number" || typeof digest !== "string" || !Array.isArray(effects))
    return undefined;
  return {
    generation,
    digest,
    effects: effects.filter((i): i is number => typeof i === "number"),
    expiresAt: typeof expiresAt === "number" ? expiresAt : 0,
    actor: e.actor,
    reason: typeof reason === "string" ? reason : "",
    at: e.at,
  };
}

/** Which effects of a run wait for a person, and why (the rules matched), by index. */
export function gatedEffects(
  specs: readonly EffectSpec[],
  indexes: readonly number[],
  agent: string,
  settings: ApprovalSettings,
  kinds: KindRegistry,
): Map<number, string[]> {
  const gated = new Map<number, string[]>();
  for (const i of indexes) {
    const reasons = approvalReasons(specs[i] as EffectSpec, agent, { approvals: settings }, kinds);
    if (reasons.length > 0) gated.set(i, reasons);
  }
  return gated;
}

/**
 * Whether a grant lets effect `i` of this interpretation go ahead: bound to the output's digest
 * and naming the effect, given for this very generation and not expired (single-use: a replay's
 * new generation needs its own), or, with `approvals.replay: "reuse"`, given for any generation of
 * this same recorded output.
 */
export function grantCovers(
  grant: GrantedApproval,
  at: { generation: number; digest: string; index: number; now: number },
  replay: ApprovalSettings["replay"],
): boolean {
  if (grant.digest !== at.digest || !grant.effects.includes(at.index)) return false;
  if (grant.generation === at.generation) return grant.expiresAt > at.now;
  return replay === "reuse" && grant.generation < at.generation;
}

/** The approval gate of one claimed run: asked before each effect that needs a person. */
export interface RunGate {
  /** The rules effect `i` matched; empty when it needs no approval. */
  reasons(i: number): readonly string[];
  /**
   * Whether effect `i` may go ahead: it needs no approval, an approval covers it, or it was
   * intended in this generation already (the gate was passed before a crash: the decision, durable
   * before the intent, is not asked again, so an approved effect is applied once).
   */
  passes(i: number): Promise<boolean>;
  /** The gated effects from `i` on that no approval covers: what a request asks for. */
  pending(from: number): Promise<number[]>;
}

/** The gate of a run of `jobId`'s generation over the effects `indexes` it takes. */
export function runGate(options: {
  journal: JournalStore;
  kinds: KindRegistry;
  settings: ApprovalSettings;
  run: { jobId: string; generation: number };
  output: { agent: string; contentHash: string; specs: readonly EffectSpec[] };
  indexes: readonly number[];
  now: () => number;
}): RunGate {
  const { journal, settings, run, output, indexes } = options;
  const gated = gatedEffects(output.specs, indexes, output.agent, settings, options.kinds);
  let grants: GrantedApproval[] | undefined;
  const loadGrants = async () => {
    grants ??= (
      await journal.events.list({ jobId: run.jobId, type: JOURNAL_EVENTS.APPROVAL_GRANTED })
    ).flatMap((e) => approvalGrantOf(e) ?? []);
    return grants;
  };
  const covered = async (i: number) => {
    const at = {
      generation: run.generation,
      digest: output.contentHash,
      index: i,
      now: options.now(),
    };
    return (await loadGrants()).some((g) => grantCovers(g, at, settings.replay));
  };
  return {
    reasons: (i) => gated.get(i) ?? [],
    async passes(i) {
      if (!gated.has(i)) return true;
      const history = await journal.ledger.history(effectKey(run.jobId, i));
      if (history.some((r) => r.generation === run.generation)) return true;
      return covered(i);
    },
    async pending(from) {
      const out: number[] = [];
      for (const i of indexes)
        if (i >= from && gated.has(i) && !(await this.passes(i))) out.push(i);
      return out;
    },
  };
}
