import { type AgentGrant, checkOutput, isCheckedOutput, scopeIssues } from "@idem/core";
import { type Config, effectKey, IdemError, type ValidationIssue } from "@idem/schema";
import {
  ATTEMPT_PATTERN,
  type DraftChange,
  type DraftState,
  type DraftStore,
  SUPERSEDED_KEPT,
} from "./draft-store.js";
import type { KindRegistry } from "./effect-tools.js";

/** A job's output as staged so far: what `finish` records, or the executor after the agent's exit 0. */
export interface DraftOutput {
  jobId: string;
  agent: string;
  summary?: string;
  effects: Record<string, unknown>[];
}

/** What staging one effect answered. */
export type StageResult =
  | { ok: true; key: string; index: number; effect: Record<string, unknown>; staged: number }
  | { ok: false; issues: StageIssue[]; code: "INVALID_INPUT" | "INVALID_STATE" | "FORBIDDEN" };

/**
 * Why an effect was refused: `path` names the field in the output as a record names it
 * (`effects.2.path`), `field` the same field in the tool's arguments (`path`; empty for the whole
 * effect or the output).
 */
export interface StageIssue extends ValidationIssue {
  field: string;
}

/**
 * What ending the draft answered: `first` for the first `finish`, then `same` (the same summary
 * again) or `other` (another summary), with the output as this call would record it and, once an
 * output of the draft is recorded, that record's content hash; or a refusal: `empty` (nothing
 * staged and no `allowEmpty`), `superseded` (a newer attempt of the job began).
 */
export type FinishResult =
  | {
      status: "first" | "same" | "other";
      output: DraftOutput;
      recorded?: { contentHash: string; effects: number } | undefined;
    }
  | { status: "empty" | "superseded"; message: string };

/** What a session sees of its draft (`job_output`). */
export interface DraftView {
  attempt: number;
  effects: Record<string, unknown>[];
  keys: string[];
  finished: boolean;
  recorded: boolean;
}

const fresh = (jobId: string, agent: string, attempt: number, attemptId?: string): DraftState => ({
  jobId,
  agent,
  attempt,
  ...(attemptId !== undefined && { attemptId }),
  superseded: [],
  effects: [],
});

/**
 * One session's hold on a job's draft output (docs/mcp.md, "Drafts and attempts"): effects staged
 * one by one, each checked as a record checks it, then ended once by `finish`. The draft lives in
 * a {@link DraftStore}, not in the session: every session and process on the job shares it (a
 * client making one call per process, a server restarted between calls). A session belongs to
 * the attempt it joined; once a newer attempt begins, its staging and `finish` are refused, so an
 * agent run again from the start never adds its effects to the draft of its earlier run.
 */
export class JobDraft {
  private constructor(
    readonly jobId: string,
    /** The job's agent, recorded with the output. */
    readonly agent: string,
    /** The attempt this session works in. */
    readonly attempt: number,
    private readonly store: DraftStore,
    private readonly config: Config,
    private readonly kinds: KindRegistry,
    /** The session's agent credential: an effect outside its scope is refused (`FORBIDDEN`). */
    private readonly grant: AgentGrant | undefined,
  ) {}

  /**
   * Joins the job's draft: without `attemptId` the current attempt (resumed; the first one when
   * there is none yet), with one the attempt of that name, begun now (its draft empty, the older
   * attempt's dropped) when the draft's current attempt has another name or none.
   * @throws IdemError INVALID_INPUT for an `attemptId` that is not {@link ATTEMPT_PATTERN};
   * INVALID_STATE when it names an attempt a newer one superseded, or the draft is another
   * agent's (naming `attempt` or `agent`).
   */
  static async join(
    store: DraftStore,
    job: { jobId: string; agent: string },
    config: Config,
    kinds: KindRegistry,
    attemptId?: string | undefined,
    grant?: AgentGrant | undefined,
  ): Promise<JobDraft> {
    const { jobId, agent } = job;
    if (attemptId !== undefined && !ATTEMPT_PATTERN.test(attemptId))
      throw new IdemError(
        "INVALID_INPUT",
        `attempt ${JSON.stringify(attemptId.slice(0, 100))}: 1 to 128 letters, digits, '.', '_', ':' or '-'`,
        { details: { field: "attempt" } },
      );
    const attempt = await store.update<number | IdemError>(jobId, (cur) => {
      if (cur && cur.agent !== agent)
        return {
          answer: new IdemError(
            "INVALID_STATE",
            `job ${jobId}'s draft is agent ${cur.agent}'s, not ${agent}'s`,
            { details: { field: "agent" } },
          ),
        };
      if (attemptId === undefined) return { answer: cur?.attempt ?? 1 };
      if (!cur) return { next: fresh(jobId, agent, 1, attemptId), answer: 1 };
      if (cur.attemptId === attemptId || cur.recorded) return { answer: cur.attempt };
      if (cur.superseded.includes(attemptId))
        return {
          answer: new IdemError(
            "INVALID_STATE",
            `attempt ${JSON.stringify(attemptId)} of job ${jobId} was superseded by attempt ${cur.attempt}${cur.attemptId === undefined ? "" : ` (${JSON.stringify(cur.attemptId)})`}: a newer run of the job began`,
            { details: { field: "attempt" } },
          ),
        };
      const superseded =
        cur.attemptId === undefined ? cur.superseded : [...cur.superseded, cur.attemptId];
      const next = fresh(jobId, agent, cur.attempt + 1, attemptId);
      return {
        next: { ...next, superseded: superseded.slice(-SUPERSEDED_KEPT) },
        answer: next.attempt,
      };
    });
    if (attempt instanceof IdemError) throw attempt;
    return new JobDraft(jobId, agent, attempt, store, config, kinds, grant);
  }

  /** The draft of this session's attempt, or why it is not this session's to change. */
  private mine(cur: DraftState | undefined): DraftState | string {
    const state = cur ?? (this.attempt === 1 ? fresh(this.jobId, this.agent, 1) : undefined);
    if (state && state.attempt === this.attempt) return state;
    const current = cur
      ? `attempt ${cur.attempt}${cur.attemptId === undefined ? "" : ` (${JSON.stringify(cur.attemptId)})`}`
      : "another attempt";
    return `this session works in attempt ${this.attempt} of job ${this.jobId}, which ${current} superseded (a newer run of the job began): nothing more can be staged or finished here`;
  }

  /**
   * Checks `effect` (with its `kind`) as it would be checked in a recorded output after the ones
   * staged before it (core's `checkOutput`: the kind's schema and checks, `limits.maxEffects`,
   * `limits.maxOutputBytes`), and stages it as its kind parsed it. A refusal stages nothing; each
   * issue names its field (see {@link StageIssue}); a finished or superseded draft refuses
   * (`INVALID_STATE`), and an effect outside the session's agent credential (`FORBIDDEN`).
   */
  async stage(effect: Record<string, unknown>): Promise<StageResult> {
    return this.store.update<StageResult>(this.jobId, (cur) => {
      const state = this.mine(cur);
      const refuse = (message: string): DraftChange<StageResult> => ({
        answer: { ok: false, code: "INVALID_STATE", issues: [{ path: "", field: "", message }] },
      });
      if (typeof state === "string") return refuse(state);
      if (state.finished || state.recorded)
        return refuse(`job ${this.jobId}'s output is finished: nothing more can be staged`);
      const index = state.effects.length;
      const checked = checkOutput(
        { jobId: this.jobId, agent: this.agent, effects: [...state.effects, effect] },
        this.config,
        this.kinds,
      );
      const prefix = `effects.${index}.`;
      const refused = (code: "INVALID_INPUT" | "FORBIDDEN", issues: ValidationIssue[]) => ({
        answer: {
          ok: false as const,
          code,
          issues: issues.map((i) => ({
            path: i.path,
            field: i.path.startsWith(prefix) ? i.path.slice(prefix.length) : "",
            message: i.message,
          })),
        },
      });
      if (!isCheckedOutput(checked)) return refused("INVALID_INPUT", checked.issues);
      const outOfScope = this.grant ? scopeIssues(checked.output, this.grant, this.kinds) : [];
      if (outOfScope.length > 0) return refused("FORBIDDEN", outOfScope);
      const parsed = checked.output.effects[index] as Record<string, unknown>;
      return {
        next: { ...state, effects: [...state.effects, parsed] },
        answer: {
          ok: true as const,
          key: effectKey(this.jobId, index),
          index,
          effect: parsed,
          staged: index + 1,
        },
      };
    });
  }

  /**
   * Ends staging, with the output's summary. The first call's summary is the draft's; a later call
   * answers whether it gave the same one, and the output with its own summary, which a record then
   * refuses as a conflict when it differs (first write wins), as a second submit. With nothing
   * staged it refuses (`empty`) unless `allowEmpty`: an output with no effects spends the job.
   */
  async finish(summary: string | undefined, allowEmpty: boolean): Promise<FinishResult> {
    return this.store.update<FinishResult>(this.jobId, (cur) => {
      const state = this.mine(cur);
      if (typeof state === "string") return { answer: { status: "superseded", message: state } };
      if (state.finished) {
        const status = state.finished.summary === summary ? "same" : "other";
        return { answer: { status, output: outputOf(state, summary), recorded: state.recorded } };
      }
      if (state.effects.length === 0 && !allowEmpty)
        return {
          answer: {
            status: "empty",
            message: `nothing is staged in job ${this.jobId}'s draft (attempt ${state.attempt}): recording it would spend the job on an output with no effects. Stage the effects first, or call finish with allowEmpty: true if no effect is what the job needs`,
          },
        };
      return {
        next: { ...state, finished: { ...(summary !== undefined && { summary }) } },
        answer: { status: "first", output: outputOf(state, summary) },
      };
    });
  }

  /** Keeps that the draft's output is recorded (its content hash) and drops its effects. */
  async recorded(contentHash: string): Promise<void> {
    await this.store.update(this.jobId, (cur) => {
      const state = this.mine(cur);
      if (typeof state === "string" || state.recorded) return { answer: undefined };
      const recorded = { contentHash, effects: state.effects.length };
      return { next: { ...state, effects: [], recorded }, answer: undefined };
    });
  }

  /** The draft as this session sees it (its attempt's; empty once a newer attempt began). */
  async view(): Promise<DraftView> {
    const state = this.mine(await this.store.read(this.jobId));
    const s = typeof state === "string" ? fresh(this.jobId, this.agent, this.attempt) : state;
    return {
      attempt: this.attempt,
      effects: s.effects,
      keys: s.effects.map((_, i) => effectKey(this.jobId, i)),
      finished: s.finished !== undefined || s.recorded !== undefined,
      recorded: s.recorded !== undefined,
    };
  }

  /** The output as staged: the job, its agent, the summary `finish` gave, the effects in order. */
  async output(): Promise<DraftOutput> {
    const state = this.mine(await this.store.read(this.jobId));
    if (typeof state === "string") throw new IdemError("INVALID_STATE", state);
    return outputOf(state, state.finished?.summary);
  }

  /**
   * Ends staging if `finish` did not, whatever was staged (the executor's exit 0), and answers the
   * output.
   */
  async seal(): Promise<DraftOutput> {
    const f = await this.finish(undefined, true);
    if (f.status === "superseded" || f.status === "empty")
      throw new IdemError("INVALID_STATE", f.message);
    return this.output();
  }
}

const outputOf = (state: DraftState, summary: string | undefined): DraftOutput => ({
  jobId: state.jobId,
  agent: state.agent,
  ...(summary !== undefined && { summary }),
  effects: [...state.effects],
});
