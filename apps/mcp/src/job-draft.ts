import { type AgentGrant, checkOutput, isCheckedOutput, scopeIssues } from "@idem/core";
import { type Config, effectKey, type ValidationIssue } from "@idem/schema";
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
  | { ok: true; key: string; index: number; effect: Record<string, unknown> }
  | { ok: false; issues: StageIssue[]; forbidden?: true };

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
 * again) or `other` (another summary); with the output as this call would record it.
 */
export interface FinishResult {
  status: "first" | "same" | "other";
  output: DraftOutput;
}

/**
 * One job's draft output in an MCP session: effects staged one by one, each checked as a record
 * checks it, then ended once by `finish`. It lives in the session's memory only: nothing of it is
 * in the journal until it is recorded, so a session (or an agent) that ends first leaves nothing.
 */
export class JobDraft {
  private readonly staged: Record<string, unknown>[] = [];
  private finished: { summary: string | undefined } | undefined;

  constructor(
    readonly jobId: string,
    /** The job's agent, recorded with the output. */
    readonly agent: string,
    private readonly config: Config,
    private readonly kinds: KindRegistry,
    /** The session's agent credential: an effect outside its scope is refused (`forbidden`). */
    private readonly grant?: AgentGrant,
  ) {}

  /** How many effects are staged. */
  get size(): number {
    return this.staged.length;
  }

  /** Whether `finish` ended it: nothing more can be staged. */
  get isFinished(): boolean {
    return this.finished !== undefined;
  }

  /**
   * Checks `effect` (with its `kind`) as it would be checked in a recorded output after the ones
   * staged before it (core's `checkOutput`: the kind's schema and checks, `limits.maxEffects`,
   * `limits.maxOutputBytes`), and stages it as its kind parsed it. A refusal stages nothing; each
   * issue names its field (see {@link StageIssue}).
   */
  stage(effect: Record<string, unknown>): StageResult {
    if (this.finished) {
      return {
        ok: false,
        issues: [
          {
            path: "",
            field: "",
            message: `job ${this.jobId}'s output is finished: nothing more can be staged`,
          },
        ],
      };
    }
    const index = this.staged.length;
    const checked = checkOutput(
      { jobId: this.jobId, agent: this.agent, effects: [...this.staged, effect] },
      this.config,
      this.kinds,
    );
    const prefix = `effects.${index}.`;
    const asStaged = (issues: ValidationIssue[]) =>
      issues.map((i) => ({
        path: i.path,
        field: i.path.startsWith(prefix) ? i.path.slice(prefix.length) : "",
        message: i.message,
      }));
    if (!isCheckedOutput(checked)) return { ok: false, issues: asStaged(checked.issues) };
    const outOfScope = this.grant ? scopeIssues(checked.output, this.grant, this.kinds) : [];
    if (outOfScope.length > 0) return { ok: false, issues: asStaged(outOfScope), forbidden: true };
    const parsed = checked.output.effects[index] as Record<string, unknown>;
    this.staged.push(parsed);
    return { ok: true, key: effectKey(this.jobId, index), index, effect: parsed };
  }

  /**
   * Ends staging, with the output's summary. The first call's summary is the draft's (`output()`);
   * a later call answers whether it gave the same one, and the output with its own summary, which
   * a record then refuses as a conflict when it differs (first write wins), as a second submit.
   */
  finish(summary: string | undefined): FinishResult {
    const status = !this.finished ? "first" : this.finished.summary === summary ? "same" : "other";
    this.finished ??= { summary };
    const { summary: _first, ...rest } = this.output();
    return { status, output: { ...rest, ...withSummary(summary) } };
  }

  /** The output as staged: the job, its agent, the summary `finish` gave, the effects in order. */
  output(): DraftOutput {
    return {
      jobId: this.jobId,
      agent: this.agent,
      ...withSummary(this.finished?.summary),
      effects: [...this.staged],
    };
  }

  /** The keys of the staged effects, in order. */
  keys(): string[] {
    return this.staged.map((_, i) => effectKey(this.jobId, i));
  }
}

const withSummary = (summary: string | undefined): { summary?: string } =>
  summary === undefined ? {} : { summary };
