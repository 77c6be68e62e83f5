import type { FailureClass } from "@idem/schema";
import type { RunState } from "../domain/states.js";
import type { WriteDurability } from "./durability.js";
import type { Lease } from "./lease.js";
import type { JournalLeaseHolders } from "./lease-holders.js";
import type { EffectRecord } from "./ledger.js";
import type { OutputRecord, ReplaySelection } from "./outputs.js";

export type { Lease } from "./lease.js";

/** One interpretation (generation) of one output. */
export interface RunRecord {
  id: number;
  jobId: string;
  generation: number;
  state: RunState;
  /** Failed attempts (a lease expiry is not an attempt). */
  attempts: number;
  leaseExpiries: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  nextAt: number | null;
  lastError: string | null;
  class: FailureClass | null;
  /** A replay's order to apply effects whose probe cannot tell whether they are present. */
  forceUnprobeable: boolean;
  /** Ordering targets: runs sharing one are interpreted in recording order. */
  targets: string[];
  /**
   * The effects this run decides, probes and applies (a replay `--kind`/`--repo`/`--root`/
   * `--target`); null: every effect of the output. Effects outside it get no ledger row in this
   * generation, and the run is done when those inside it are settled.
   */
  only: EffectFilter | null;
  /** Who made this generation by a replay, why, and of what; null for a first run or a dlq retry. */
  replay: ReplayLineage | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * Which effects of an output a run takes, by kind and by place. An effect is in the filter when its
 * kind is one of `kinds` (or `kinds` is absent) and its place is one of `repos` (git.commit,
 * git.patch), `roots` (file.write) or `targets` (nats.publish, http.request), or none of those three
 * is given. Names are config aliases; an empty or absent list does not constrain.
 */
export interface EffectFilter {
  kinds?: string[];
  repos?: string[];
  roots?: string[];
  targets?: string[];
}

/** The lineage of a replayed generation, as recorded with it (and in its `run.replayed` event). */
export interface ReplayLineage {
  /** Who replayed (`--actor`, `$IDEM_ACTOR`, `$USER`), as given. */
  actor: string;
  /** Why (`--reason`), as given; null when the caller gave none (a replay through the journal API). */
  reason: string | null;
  /** The operator's selection of outputs (jobs, agent, since, state, all), as given. */
  selection: ReplaySelection;
  /** The effect filter of the new generation (the same as the run's `only`); null: every effect. */
  only: EffectFilter | null;
  /** The generation this one replays: the output's latest when the replay was made. */
  replaysGeneration: number;
}

/** What a replay records with each generation it creates. */
export interface ReplayOptions {
  actor: string;
  forceUnprobeable?: boolean;
  /** Why; stored as given. */
  reason?: string;
  /** The operator's selection, recorded as the lineage's `selection` (default: the one replayed). */
  selection?: ReplaySelection;
  /** Only these effects (see EffectFilter); absent or null: every effect. */
  only?: EffectFilter | null;
  /**
   * The ordering targets of each new generation, by job ID (a filtered run orders only on the
   * targets of the effects it takes); an output not named gets those of all its effects (its
   * latest unfiltered run's), so a generation after a filtered one, or a dlq retry of it, orders
   * on every target again.
   */
  targets?: Readonly<Record<string, readonly string[]>>;
}

/** A claimed run, with its output and lease. */
export interface Claim {
  run: RunRecord;
  output: OutputRecord;
  lease: Lease;
  /** True when the run was taken over from a holder whose lease expired (a crash). */
  takeover: boolean;
  /**
   * Every ledger row of the run's job (all generations, all keys), read with the claim: what
   * `ledger.history(key)` answers for each of the run's keys until the holder writes one. Absent
   * when the store does not read it with the claim (the caller reads `ledger.history`).
   */
  history?: EffectRecord[];
}

/** How a run is claimed: by whom, for how long, and when a run that keeps expiring goes dead. */
export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  /** A run taken over this many times goes dead (class infrastructure) instead of being claimed. */
  maxLeaseExpiries: number;
  /**
   * Pipelining (the interpreter's `interpreter.pipeline`): `"also"` claims, besides a run whose
   * targets have no earlier unfinished run, one whose earlier unfinished runs on its targets are all
   * running under `owner`'s unexpired leases (a follower: the owner keeps the order between them);
   * `"only"` claims only such a follower. Absent: no follower is claimed.
   */
  follow?: "also" | "only";
}

/** The latest run of an output, as a bulk read returns it. */
export interface LatestRun {
  generation: number;
  state: RunState;
}

/**
 * Runs: one interpretation (generation) of one output, claimed under a lease. The holders of the
 * leases (`leaseOwners`, `expireLeasesOf`) are for a caller that finds a holder dead.
 */
export interface JournalRuns extends JournalLeaseHolders {
  /**
   * Takes the next due run whose targets have no earlier unfinished run (or, with `follow`, whose
   * earlier unfinished runs are all held by `owner`), with a fresh lease token.
   * Due: pending, failed past `nextAt`, or running with an expired lease, or one ended by
   * `expireLeasesOf` (counted as a lease expiry,
   * not an attempt; at `maxLeaseExpiries` the run goes dead instead). Atomic across processes; not
   * fsynced on its own (a lost claim is a lost lease, taken over later).
   */
  claim(options: ClaimOptions): Promise<Claim | undefined>;
  /**
   * Extends a held lease by `leaseMs` from now; returns the new lease. Not fsynced on its own, as
   * a claim: a lost extension leaves the shorter lease, as a late heartbeat does.
   * @throws LEASE_LOST when the token is stale.
   */
  extendLease(lease: Lease, leaseMs: number): Promise<Lease>;
  /**
   * Gives the run back without counting an expiry (graceful shutdown): pending again, due now.
   * @throws LEASE_LOST when the token is stale.
   */
  release(lease: Lease): Promise<void>;
  /**
   * Ends the run as done. With `soon`, answered once committed and durable shortly after (see
   * WriteDurability): a power loss that takes it leaves the run running under a dead lease, and its
   * next holder finds every effect settled (or probes it again) and ends it done.
   * @throws LEASE_LOST when the token is stale; INVALID_STATE while an effect is not settled.
   */
  complete(lease: Lease, durability?: WriteDurability): Promise<void>;
  /**
   * Counts an attempt; the run waits until `nextAt`, then is due again.
   * @throws LEASE_LOST when the token is stale.
   */
  fail(
    lease: Lease,
    failure: { class: FailureClass; error: string; nextAt: number },
  ): Promise<void>;
  /**
   * Ends the run as dead (no more automatic attempts) with its class and error; later runs on its
   * targets go ahead, and are named in its error.
   * @throws LEASE_LOST when the token is stale.
   */
  markDead(lease: Lease, failure: { class: FailureClass; error: string }): Promise<void>;
  /** Every run of one output, oldest generation first. */
  forJob(jobId: string): Promise<RunRecord[]>;
  /** The latest run of one output, or undefined. */
  latest(jobId: string): Promise<RunRecord | undefined>;
  /** The latest run of each of many outputs (absent: no run), read in bulk. */
  latestOf(jobIds: readonly string[]): Promise<ReadonlyMap<string, LatestRun>>;
  /** Earliest time an active run becomes due (pending: now); undefined when no run is active. */
  nextDueAt(): Promise<number | undefined>;
  /** Counts of active runs: pending, running, failed (waiting for a retry). */
  active(): Promise<{ pending: number; running: number; failed: number }>;
  /**
   * Creates the next generation (pending, empty effects ledger) for each selected output whose
   * latest run is not active (a second generation beside it would race it); returns those created.
   * Each carries its effect filter (`only`) and its lineage (`replay`), written with the run and
   * in its `run.replayed` event, in the same transaction. With a filter, only outputs whose latest
   * run is done get a generation: over a dead one, the effects outside the filter may be open or
   * never reached, and a filtered run that ends done would hide them.
   */
  replay(selection: ReplaySelection, options: ReplayOptions): Promise<RunRecord[]>;
}
