import type { ApplyOrder, ApplyTicket } from "@idem/kit";
import { FAULT_POINTS, IdemError, isIdemError } from "@idem/schema";
import { CommitChain } from "../commit-chain.js";
import { type KeyIndex, keyRef } from "../key-index.js";
import type { RepoObjects } from "../plumbing/repo-objects.js";
import type { MirrorParts, RemoteMirror } from "./remote-mirror.js";

/** One effect waiting for a push: its key, the probed remote tip, and how its commit is built. */
export interface PushEntry {
  key: string;
  /** The remote tip the probe answered absent at (null: the remote had no branch). */
  base: string | null;
  /** The agent's message with the `Idem-Effect` trailer; author and tree are added here. */
  commitBody(tree: string, parent: string | null): Uint8Array;
  paths: string[];
  /** Writes the root tree from the parent's tree (null: none). */
  tree(baseTree: string | null): Promise<string>;
  /** Another run's push this one must follow (see ApplyOrder). */
  order?: ApplyOrder | undefined;
}

interface Waiting extends PushEntry {
  resolve(detail: Record<string, unknown>): void;
  reject(e: unknown): void;
}

/** A ticket whose state moves once, from queued to done or failed, as its entry is answered. */
type Ticket = { state: ApplyTicket["state"] };

/** An effect's commit built in the mirror, on `parent`, waiting for its push. */
interface Built {
  w: Waiting;
  commit: string;
  parent: string | null;
}

/** Pushes per burst: effects waiting at once are built on each other and pushed together. */
const MAX_BURST = 64;
/** How long a push waits at most for the probes running when it starts to turn into applies. */
const GATHER_MS = 50;
/** Rejected pushes (the remote moved) re-fetched, re-probed and rebuilt before TARGET_MOVED. */
const MAX_REBUILDS = 5;

/**
 * The pushes of one branch of a remote: applies queue up, and one loop at a time takes every
 * waiting effect, builds their commits on the mirror's tip one after another (each on the previous,
 * all in process), and pushes the last by compare-and-swap from the tip. Each apply answers only
 * once the push that carries its commit succeeded, so the ledger never says `applied` for a commit
 * the remote does not have. A rejected push (the remote moved) fetches, probes each effect again at
 * the new tip (present there: answered without a write) and builds again; a git.patch that no
 * longer applies is TARGET_MOVED, so the interpreter probes it again and sees the conflict.
 */
export class RemotePusher {
  private readonly queue: Waiting[] = [];
  private running = false;
  /** The commits this process pushed in a row on the branch (a probe at one of them is checked in memory). */
  private readonly chain = new CommitChain();

  constructor(
    private readonly branch: string,
    private readonly mirror: RemoteMirror,
    private readonly parts: MirrorParts & { objects: RepoObjects; keys: KeyIndex },
  ) {}

  /**
   * Answers `{ commit, base }` once the effect's commit is on the remote branch. The entry joins
   * the queue at once, behind every entry queued before it (`order.queued` is told so, with its
   * ticket); an entry whose `order.after` failed is answered ORDER_BLOCKED without being built.
   */
  push(entry: PushEntry): Promise<Record<string, unknown>> {
    const ticket: Ticket = { state: "queued" };
    const answered = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.queue.push({
        ...entry,
        resolve(detail) {
          if (ticket.state === "queued") ticket.state = "done";
          resolve(detail);
        },
        reject(e) {
          if (ticket.state === "queued") ticket.state = "failed";
          reject(e);
        },
      });
      if (!this.running) void this.drain();
    });
    entry.order?.queued?.(ticket);
    return answered;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        await this.mirror.quiet(this.branch, GATHER_MS);
        const burst = this.queue.splice(0, MAX_BURST);
        try {
          await this.pushBurst(burst);
        } catch (e) {
          for (const w of burst) w.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * Builds and pushes one burst; settles every entry it can (the rest are rejected by drain). The
   * mirror's lock is held to build and to move the mirror's refs, not across the push (a network
   * round trip), so the other branches of the repository push meanwhile.
   */
  private async pushBurst(burst: Waiting[]): Promise<void> {
    let pending = burst;
    for (let round = 0; ; round++) {
      const built = await this.parts.withLock(() => this.build(pending));
      if (!built) return;
      const outcome = await this.mirror.remote.push(this.branch, built.head, built.tip);
      if (outcome === "pushed") {
        this.mirror.pushed(this.branch);
        this.parts.fault(FAULT_POINTS.INTERPRETER_AFTER_PUSH);
        this.chain.extend(
          built.tip,
          built.commits.map((b) => ({ commit: b.commit, key: b.w.key })),
        );
        await this.parts.withLock(() => this.follow(built.tip, built.commits));
        for (const b of built.commits) b.w.resolve({ commit: b.commit, base: b.parent });
        return;
      }
      this.chain.reset();
      const now = await this.parts.withLock(() => this.mirror.fetchAfterRejection(this.branch));
      pending = built.commits.map((b) => b.w);
      if (round + 1 >= MAX_REBUILDS) {
        for (const w of pending) w.reject(this.moved(built.tip, now));
        return;
      }
    }
  }

  /**
   * After the push, under the lock: the mirror's branch, the burst's key refs and the watermark in
   * one ref transaction (compare-and-swap from the tip the burst was built on). A failure (a probe
   * reset the mirror to a newer remote tip meanwhile) only costs a later probe a scan.
   */
  private async follow(tip: string | null, commits: Built[]): Promise<void> {
    const { keys, lock } = this.parts;
    const last = commits.at(-1);
    if (!last) return;
    const branchRef = `refs/heads/${this.branch}`;
    try {
      const lines = [
        tip === null
          ? `create ${branchRef} ${last.commit}`
          : `update ${branchRef} ${last.commit} ${tip}`,
        ...commits.map((b) => `update ${keyRef(this.branch, b.w.key)} ${b.commit}`),
        ...(await keys.catchUpLines(this.branch, tip, last.commit, last.w.key)),
      ];
      await lock.updateRefs(lines);
    } catch (e) {
      if (!isIdemError(e)) throw e;
    }
  }

  /**
   * Where an effect probed at `base`, older than `tip`, stands at `tip`: present (its commit),
   * absent (build it), or moved (`tip` does not descend from `base`: probe again).
   */
  private async since(
    w: Waiting,
    tip: string | null,
  ): Promise<{ present: string } | "absent" | "moved"> {
    const known = w.base === null ? undefined : this.chain.since(w.base, w.key, tip);
    if (known !== undefined) return known;
    const { keys } = this.parts;
    if (w.base !== null && (tip === null || !(await keys.isAncestor(w.base, tip)))) return "moved";
    const found = await keys.lookupKey(this.branch, w.key, w.base);
    return found.found ? { present: found.commit } : "absent";
  }

  /**
   * Under the lock: each waiting effect's commit on the previous one, from the mirror's tip. An
   * effect probed at an older tip is built on the new one only when the tip descends from its probe
   * and its key is not there (present: answered now, without a write).
   */
  private async build(
    pending: Waiting[],
  ): Promise<{ tip: string | null; head: string; commits: Built[] } | undefined> {
    const { objects } = this.parts;
    const tip = await objects.head(this.branch);
    const built: Built[] = [];
    let parent = tip;
    for (const w of pending) {
      // Built in queue order, so the entry it follows is answered or built by now.
      if (w.order?.after?.state === "failed") {
        w.reject(this.blocked());
        continue;
      }
      if (w.base !== tip) {
        const at = await this.since(w, tip);
        if (at === "moved") {
          w.reject(this.moved(w.base, tip));
          continue;
        }
        if (at !== "absent") {
          w.resolve({ commit: at.present, base: w.base });
          continue;
        }
      }
      let tree: string;
      try {
        tree = await w.tree(await objects.treeOf(parent));
      } catch (e) {
        // Built on a later tip than the probed one: the interpreter's probe there decides.
        w.reject(parent !== w.base && isIdemError(e) ? this.moved(w.base, parent) : e);
        continue;
      }
      const commit = await objects.writeObject("commit", w.commitBody(tree, parent));
      built.push({ w, commit, parent });
      parent = commit;
    }
    if (built.length === 0 || parent === null) return undefined;
    return { tip, head: parent, commits: built };
  }

  private blocked(): IdemError {
    return new IdemError(
      "ORDER_BLOCKED",
      `repo "${this.mirror.remote.alias}": the push this effect follows on ${this.branch} failed; this one was not pushed`,
    );
  }

  private moved(base: string | null, head: string | null): IdemError {
    return new IdemError(
      "TARGET_MOVED",
      `repo "${this.mirror.remote.alias}": ${this.branch} on the remote moved from ${base} to ${head} since the probe`,
      { details: { base, head } },
    );
  }
}
