import type { Clock } from "@idem/schema";
import type { z } from "zod";
import type { KindApproval } from "./kind-approval.js";
import type { PlaceType } from "./kind-places.js";

/**
 * Every effect spec names its kind; the rest is the kind's own. What an agent sends in an output's
 * `effects` array, checked by the kind's `spec` schema before it is recorded.
 */
export interface EffectSpecBase {
  kind: string;
}

/**
 * Where an effect stands at its target. `present` and `absent` carry a detail to store with the
 * intent or result (what the kind needs to find its way after a crash: git stores the branch head
 * it probed, and apply moves the branch from exactly that commit). `conflict`: the target moved
 * so that the effect cannot be applied as written; idem never forces it (the run ends dead, class
 * `conflict`).
 */
export type ProbeResult =
  | { status: "present"; detail: Record<string, unknown> }
  | { status: "absent"; detail: Record<string, unknown> }
  | { status: "conflict"; reason: string };

/**
 * What an earlier probe of the same effect stored with the intent (the `detail` of its `absent`
 * answer), handed back after a crash as it was stored: the kind's own, opaque to idem. A kind reads
 * what it wrote there (a git probe, the branch head it probed) and checks it, as it would any
 * stored bytes.
 */
export type ProbeHint = Readonly<Record<string, unknown>>;

/** Where a queued apply stands: waiting in its target's queue, succeeded, or failed. */
export interface ApplyTicket {
  readonly state: "queued" | "done" | "failed";
}

/**
 * Order between the applies of one target that different runs make at once (the interpreter's
 * pipeline). A kind that queues its applies calls `queued` as soon as this apply stands in the
 * target's queue behind every apply queued before it; a later apply given that ticket as `after`
 * goes out only after it, and fails with ORDER_BLOCKED, changing nothing, when it did not succeed.
 * Kinds without a queue ignore both.
 */
export interface ApplyOrder {
  after?: ApplyTicket | undefined;
  queued?: ((ticket: ApplyTicket) => void) | undefined;
}

/**
 * What idem can promise for a kind, stated in `idem kinds` and its docs:
 * - `exactly-once`: the effect and its key are committed together at the target (one
 *   transaction), so after any crash the probe knows, and nothing is ever `uncertain`;
 * - `exactly-once-in-effect`: the probe finds the effect by its key after any crash, so a repeat is
 *   never applied; nothing ends `uncertain`;
 * - `target-dedup`: the target absorbs a repeat under the key (an idempotency key it honours);
 * - `uncertain-window`: after a crash between sending and recording, the outcome can be unknown
 *   and waits for a person (`idem dlq resolve`).
 */
export type KindGuarantee =
  | "exactly-once"
  | "exactly-once-in-effect"
  | "target-dedup"
  | "uncertain-window";

/** The limits of the config that every kind honours (`limits` in the config). */
export interface KindLimits {
  /** The largest file (or patch, or body) an effect may carry, in bytes (`limits.maxFileBytes`). */
  readonly maxFileBytes: number;
}

/**
 * The NATS servers idem's own jobs go through (the config's `nats` section), for a kind that talks
 * to NATS too: it may default to these servers, and it keeps out of idem's own subjects.
 */
export interface HostNats {
  /** The servers, as one comma-separated list (`nats://a:4222,nats://b:4222`). */
  readonly servers: string;
  /** The prefix of idem's own subjects (`idem`): no effect may publish under it. */
  readonly subjectPrefix: string;
  /** The replicas of idem's jobs stream: a stream beside it on that cluster should keep as many. */
  readonly replicas: number;
}

/** What a kind's pure parts see: its own options and the few facts of the host every kind may use. */
export interface KindContext<O> {
  /**
   * The kind's options, parsed by its `options` schema (and `resolveOptions`): `kinds.<name>.options`
   * in the config, or the config section of one of idem's own kinds.
   */
  readonly options: O;
  readonly limits: KindLimits;
  /** idem's own NATS servers, when the config has a `nats` section. */
  readonly nats?: HostNats | undefined;
}

/** Where a kind's options come from: what `resolveOptions` resolves them against. */
export interface OptionsSource {
  /** The config file's folder: a relative path in the options is relative to it. */
  readonly dir: string;
  /** Where the options are in the config (`kinds.acme.ticket.options`, `repos`), for messages. */
  readonly at: string;
}

/** The progress of a long preparation a kind makes on first use (a first clone of a mirror). */
export interface KindProgress {
  /** What is being prepared (`cloning site`). */
  readonly what: string;
  /** Its stage as the tool reports it (`Receiving objects`). */
  readonly stage: string;
  readonly percent: number;
}

/** What `check` sees: the kind's context, and a way to report more than one problem. */
export interface CheckContext<O> extends KindContext<O> {
  /** Reports a problem with `field` (a path inside the spec, `files.0.path`) and goes on checking. */
  issue(field: string, message: string): void;
}

/**
 * A place an effect acts on, by its alias in the config and the filter that selects it: `repo`,
 * `root` or `target` (`idem replay --repo/--root/--target`, see PLACE_TYPES). A kind chooses the
 * word that fits its places (a GitHub repository is a `repo`, an SQL database a `target`).
 */
export interface KindAlias {
  type: PlaceType;
  name: string;
}

/** What `open` gets to build the kind's resource (a client, a pool) once per process. */
export interface OpenContext<O> extends KindContext<O> {
  /**
   * A credential from the environment variable the config names (never from agent output).
   * @throws IdemError INVALID_CONFIG naming the variable (never its value) when it is unset.
   */
  env(variable: string): string;
  /**
   * One value per host for every kind that asks with the same id (a client two kinds share), made
   * by the first that asks; `dispose` (the first asker's) runs once when the host closes, after
   * every kind's `close`.
   */
  shared<T>(id: string, create: () => T, dispose?: (value: T) => void | Promise<void>): T;
  readonly clock: Clock;
  readonly fetch: typeof fetch;
  /**
   * Names a crash window of the kind (`acme.after-create`): the host kills the process there when
   * told to (`IDEM_FAULT`), so the conformance drill can crash inside the kind's own apply too.
   */
  fault(point: string): void;
  /** Reports the progress of a long preparation (shown on a terminal; ignored elsewhere). */
  progress(p: KindProgress): void;
}

/** One probe of one effect. */
export interface ProbeCall<O, R> extends KindContext<O> {
  /** The effect's key, `<jobId>/<index>`: what the target must carry to be found. */
  readonly key: string;
  /** The resource `open` built (undefined for a kind without `open`). */
  readonly resource: R;
  /**
   * A time (ms since the epoch) before which idem never applied this effect: the output's
   * recording time. A probe that lists the target's recent items starts here (minus the clock
   * skew it allows).
   */
  readonly since: number;
  /** What an earlier probe stored with the intent (see ProbeHint), after a crash. */
  readonly hint?: ProbeHint | undefined;
  readonly clock: Clock;
}

/** A scan of the keys present at one target. */
export type ScanCall<O, R> = Omit<ProbeCall<O, R>, "key" | "hint" | "since">;

/** One apply of one effect. Called again after a crash at any point inside it: it must be safe. */
export interface ApplyCall<O, R> extends ProbeCall<O, R> {
  /** The probe that preceded it (absent), if any; without one, apply checks for itself. */
  readonly probed?: ProbeResult | undefined;
  readonly order?: ApplyOrder | undefined;
}

/** Many effects of this kind probed at once (a replay plan, an audit). */
export interface BatchCall<O, R> extends KindContext<O> {
  readonly resource: R;
  /**
   * Probe each against a scratch copy as if the earlier absent ones had been applied (a chain of
   * dependent effects lost in an incident shows absent, not conflict). Never changes the target.
   */
  readonly simulate: boolean;
  /** The one-effect probe, for items the batch does not answer itself. */
  probeOne(spec: EffectSpecBase, key: string, since: number): Promise<ProbeResult>;
  readonly clock: Clock;
}

/** One thing a kind's `doctor` found, shown by `idem doctor` as a row. */
export interface KindFinding {
  /**
   * A violation (something broken) makes `idem doctor` exit 3; `unavailable` (a service out of
   * reach, a lock held: nothing is broken, something must come back or let go) exit 1; a warning
   * breaks nothing yet.
   */
  severity: "violation" | "unavailable" | "warning";
  /** The config key at fault (`sql.targets.orders.statements.add_order`). */
  key: string;
  /** What is wrong, without a credential. */
  message: string;
  /** What to do about it. */
  fix?: string;
}

/** What a kind's `doctor` sees: its context, its credentials, and the bound of each check. */
export interface DoctorContext<O> extends KindContext<O> {
  /**
   * A credential from the environment variable the config names.
   * @throws IdemError INVALID_CONFIG naming the variable (never its value) when it is unset.
   */
  env(variable: string): string;
  readonly fetch: typeof fetch;
  readonly clock: Clock;
  /** How long any one network check may take (`idem doctor --timeout`). */
  readonly timeoutMs: number;
  /**
   * Names what the check covers (`repo site`), for doctor's summary of what it checked; a kind of
   * the config's own (options under `kinds.<name>`) that names nothing is listed as `kind <name>`.
   */
  checking(what: string): void;
  /**
   * `idem doctor --network`: the operator asked for checks over the network too. A kind whose
   * target is a service of the operator's own (a database) checks it either way, as doctor checks
   * the journal.
   */
  readonly network: boolean;
}

/**
 * A lock a kind keeps between processes on one target its options configure: an flock(2) file
 * holding its holder's record (`{ pid, host, since }`, as @idem/effects' FileLock writes it).
 */
export interface KindLock {
  /** The config key of the target (`repos.site`), as doctor keys a finding. */
  key: string;
  /** The target, for people (`repo site`). */
  what: string;
  /** The lock file. */
  file: string;
}

/** Sample specs for the conformance drill (`idem kinds test`, docs/effect-kinds.md). */
export interface KindSamples<S> {
  /**
   * The i-th valid spec: distinct `i` give distinct specs (a path, a title with `i` in it), on the
   * drill's target. The drill numbers its samples from a base of its own per drill (a large
   * number), so two drills on one target never share a spec; it never relies on `i` from 0.
   */
  valid(i: number, ctx: KindContext<unknown>): S;
  /** Specs the kind must refuse before record, each with the field its refusal names. */
  invalid: readonly { spec: unknown; field: string; why?: string }[];
}

/**
 * Everything idem knows of one effect kind, in one place: what an agent may ask for (`spec`),
 * what is refused before record (`check`), what it acts on (`targets`, `aliases`), how its target
 * is asked (`probe`) and changed (`apply`), and the optional parts replay and audit use. Written
 * with `defineEffectKind`; idem's own kinds are written the same way.
 */
export interface EffectKind<S extends EffectSpecBase = EffectSpecBase, O = unknown, R = unknown> {
  /** `<namespace>.<name>`: lowercase letters, digits, `_` and `-`, at least one dot. */
  readonly name: string;
  /** What the effect does, in a sentence or two (the MCP tool description, `idem kinds`). */
  readonly description: string;
  readonly guarantee: KindGuarantee;
  /** The spec's schema, its `kind` a literal of `name`; its JSON Schema is what agents see. */
  readonly spec: z.ZodType<S>;
  /** The schema of `kinds.<name>.options` in the config; parsed once at load. */
  readonly options?: z.ZodType<O> | undefined;
  /**
   * idem's own kinds only: the top-level config section their options come from (`github`, shared
   * by the three GitHub kinds; `repos`, shared by the two git kinds). Without that section the kind
   * is not available in that config, unless `configSectionOptional`. A kind of the config's own
   * takes `kinds.<name>.options`.
   */
  readonly configSection?: string;
  /**
   * With `configSection`: the kind is available without its section too, its options then parsed
   * from `{}`; `idem init` writes the section so.
   */
  readonly configSectionOptional?: boolean;
  /**
   * Makes the parsed options independent of where the config file is (a relative path made
   * absolute against `source.dir`), once, when the kinds are loaded. What it answers must parse
   * and resolve again to itself: a drill writes it into a config of its own in another folder.
   * @throws IdemError INVALID_CONFIG naming the key under `source.at`.
   */
  resolveOptions?(options: O, source: OptionsSource): O;
  /**
   * Checks of the spec beyond its schema (aliases configured, sizes, paths, the text a target
   * would refuse), run before record: pure, no I/O. Report with `ctx.issue(field, message)` or
   * throw `invalid(field, message)`; what passes cannot fail at the target for a reason the spec
   * alone decides.
   */
  check?(spec: S, ctx: CheckContext<O>): void;
  /** The ordering targets it acts on (`repo:site@main`): runs sharing one apply in recording order. */
  targets?(spec: S, ctx: KindContext<O>): readonly string[];
  /** The places it acts on (replay's `--repo`, `--root`, `--target` filters select by them). */
  aliases?(spec: S): readonly KindAlias[];
  /**
   * The places the kind's options define, by type: what replay's `--repo`, `--root` and `--target`
   * accept, `idem kinds` lists and the MCP tools describe.
   */
  knownAliases?(ctx: KindContext<O>): readonly KindAlias[];
  /**
   * True when a probe depends on the state the earlier effects on its target leave (a patch
   * applies to the tree the earlier ones made): a replay plan then probes them in a simulation.
   */
  readonly probeDependsOnEarlier?: boolean;
  /**
   * What a later recorded effect of this kind with the same answer supersedes (file.write: the
   * root and path): the earlier one is then skipped, never rolled back. Undefined: never.
   */
  supersedeKey?(spec: S): string | undefined;
  /** One line for `idem show` and the console (`site@main: "add page" (2 files)`). */
  describe?(spec: S): string;
  readonly approval?: KindApproval<S> | undefined; // approval rules' facts (docs/approvals.md)
  /** Whether `probe` can tell for this spec (default true). */
  probeable?(spec: S, ctx: KindContext<O>): boolean;
  /** Whether the target absorbs a repeat under the key (default false). */
  targetDedup?(spec: S, ctx: KindContext<O>): boolean;
  /**
   * Whether the target queues applies and builds each on its state when it goes out (a git branch's
   * pushes or batches): a probe may then run while earlier applies there are still queued.
   */
  queuedApplies?(spec: S, ctx: KindContext<O>): boolean;
  /** Builds the resource its probe and apply use (a client, a pool), once per process. */
  open?(ctx: OpenContext<O>): R | Promise<R>;
  /** Releases what `open` built. */
  close?(resource: R): void | Promise<void>;
  /**
   * Asks the target whether the effect with `call.key` happened. Never changes the target.
   * @throws IdemError: validation codes when the spec cannot work there, transient ones to retry.
   */
  probe(spec: S, call: ProbeCall<O, R>): Promise<ProbeResult>;
  /**
   * Makes the effect happen once and returns the detail to store. Safe to call again after a
   * crash at any point inside it (probe first under the target's lock when `call.probed` is not
   * given, or commit the key with the effect).
   */
  apply(spec: S, call: ApplyCall<O, R>): Promise<Record<string, unknown>>;
  /**
   * The group a spec's batch probe belongs to: items with the same batch target, of kinds that
   * share one `probeBatch` function (the two git kinds on one branch), go to one call in recording
   * order. Default: one group per kind.
   */
  batchTarget?(spec: S, ctx: KindContext<O>): string;
  /** Many keys in one pass (one scan of a branch for all its keys); default: `probe` each. */
  probeBatch?(
    items: readonly { spec: S; key: string; since: number }[],
    call: BatchCall<O, R>,
  ): Promise<Map<string, ProbeResult>>;
  /**
   * The keys present at a target, with where each is (commits, ids): `idem audit` finds
   * duplicates and keys the journal does not know; the drill counts each key. `scanTarget` names
   * the target a spec is on, so one scan serves every spec there.
   */
  scan?: {
    target(spec: S, ctx: KindContext<O>): string;
    keys(spec: S, call: ScanCall<O, R>): Promise<Map<string, string[]>>;
    /**
     * Specs standing for every target the config (or the options) defines, so an audit scans a
     * target even when the journal knows no effect there (a journal that lost its records):
     * only what `target` and `keys` read need be filled in.
     */
    configured?(ctx: KindContext<O>): readonly S[];
  };
  /** Samples for the conformance drill. */
  samples?: KindSamples<S>;
  /**
   * The kind's own crash windows, each a name in the kind's namespace (`acme.after-create`) that
   * its apply passes to `OpenContext.fault` at that moment. `IDEM_FAULT=<point>[:<n>]` kills the
   * interpreter there, and the conformance drill kills it at each of them as it does at idem's own
   * fault points (docs/reliability.md).
   */
  readonly faultPoints?: readonly string[];
  /**
   * `idem doctor`'s check of what the kind's options configure (a target reachable, its tables,
   * its statements): reads, never changes the target. Answers what it found (nothing: all well);
   * a throw is shown as a violation of the kind. Kinds that share one `doctor` function (the two
   * git kinds, one config section) are checked once.
   */
  doctor?(ctx: DoctorContext<O>): Promise<readonly KindFinding[]>;
  /**
   * The lock files the kind keeps on what its options configure (the git kinds' repository locks):
   * `idem status` and `idem doctor` name a process that froze, or died leaving a child, holding
   * one. Kinds that share one `locks` function are asked once. Reads only; never waits on a lock.
   */
  locks?(ctx: KindContext<O>): Promise<readonly KindLock[]>;
}

/** An effect kind whose spec, options and resource types are no longer known (a registry's). */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds kinds of every spec, options and resource type.
export type AnyEffectKind = EffectKind<any, any, any>;
