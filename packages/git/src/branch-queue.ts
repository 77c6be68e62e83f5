import type { ApplyOrder, ApplyTicket } from "@idem/kit";
import { FAULT_POINTS, type FaultHook, IdemError, isIdemError } from "@idem/schema";
import type { BranchPublisher } from "./branch-publisher.js";
import { CommitChain } from "./commit-chain.js";
import { type Signature, serializeCommit } from "./plumbing/git-objects.js";
import type { ObjectWriter, PackBatch, RepoObjects } from "./plumbing/repo-objects.js";

/** One effect waiting for its commit on a local branch: its key, the probed head, its change. */
export interface QueuedCommit {
  key: string;
  /** The head the probe answered absent at (null: the branch did not exist). */
  base: string | null;
  /** The commit's message (GitRepo adds the `Idem-Effect` trailer). */
  message: string;
  /** Every path the commit changes. */
  paths: string[];
  /**
   * Writes the root tree from the parent's tree (null: none), under the repo lock, its objects
   * through `objects`: the batch's writer when `inProcess`, else the repository's.
   */
  tree(baseTree: string | null, objects: ObjectWriter): Promise<string>;
  /**
   * `tree` runs no git process (it reads and writes objects in process only): its objects may be
   * held in memory and written with the batch's others as one pack before the batch is published.
   */
  inProcess?: boolean | undefined;
  /** Another run's apply this one must follow (see ApplyOrder). */
  order?: ApplyOrder | undefined;
}

interface Waiting extends QueuedCommit {
  resolve(detail: Record<string, unknown>): void;
  reject(e: unknown): void;
  /** True once answered (resolved or rejected). */
  settled(): boolean;
}

/** A ticket whose state moves once, from queued to done or failed, as its entry is answered. */
type Ticket = { state: ApplyTicket["state"] };

/** An effect's commit built on `parent`, waiting for the batch's ref transaction. */
interface Built {
  w: Waiting;
  commit: string;
  parent: string | null;
}

/** What the queue works with: the repository's objects, its publisher, its lock, who commits. */
export interface BranchQueueParts {
  objects: RepoObjects;
  publisher: BranchPublisher;
  withLock<T>(fn: () => Promise<T>): Promise<T>;
  /** The author and committer of the next batch (the repo config's, at the clock's now). */
  mover(): Signature;
  fault: FaultHook;
}

/** Commits per batch: effects waiting at once are built on each other and published together. */
const MAX_BATCH = 64;

/**
 * The applies of one local branch (group commit): applies queue up, and one loop at a time takes
 * every waiting effect (no wait to gather: what queued while the previous batch was published),
 * builds their commits on the branch's head one after another under the repo lock (each on the
 * previous, all in process), and publishes them in one durable step (`BranchPublisher.publish`:
 * one fsync of every object and ref lock file, one ref transaction that moves the branch from the
 * head to the last commit and sets each key's index ref at its own commit, one crash marker, the
 * working tree synced once). Each apply answers `{ commit, base }` only once that step succeeded;
 * a failed batch rejects every entry it built (the later runs' applies that follow one of them
 * then answer ORDER_BLOCKED), but for a batch the working tree refuses (DIRTY_WORKTREE, nothing
 * moved): its entries go again one by one, so that the one a dirty path concerns is refused alone.
 * An effect probed at an older head is built on the current one only when everything between is
 * this queue's own commits and its key is not among them (present: answered without a write); a
 * branch moved by anything else is TARGET_MOVED, so the interpreter probes it again.
 */
export class BranchQueue {
  private readonly queue: Waiting[] = [];
  private running = false;
  /** How many entries at the front of the queue go one batch each (after a refused batch). */
  private alone = 0;
  /** The commits this queue published in a row on the branch (a probe at one of them is checked in memory). */
  private readonly chain = new CommitChain();

  constructor(
    private readonly alias: string,
    private readonly branch: string,
    private readonly parts: BranchQueueParts,
  ) {}

  /**
   * Answers `{ commit, base }` once the effect's commit is on the branch, durably. The entry joins
   * the queue at once, behind every entry queued before it (`order.queued` is told so, with its
   * ticket); an entry whose `order.after` failed is answered ORDER_BLOCKED without being built.
   * @throws IdemError TARGET_MOVED, DIRTY_WORKTREE, LOCKED, ORDER_BLOCKED, the tree's own errors.
   */
  commit(entry: QueuedCommit): Promise<Record<string, unknown>> {
    const ticket: Ticket = { state: "queued" };
    let settled = false;
    const answered = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.queue.push({
        ...entry,
        resolve(detail) {
          settled = true;
          if (ticket.state === "queued") ticket.state = "done";
          resolve(detail);
        },
        reject(e) {
          settled = true;
          if (ticket.state === "queued") ticket.state = "failed";
          reject(e);
        },
        settled: () => settled,
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
        const batch = this.queue.splice(0, this.alone > 0 ? 1 : MAX_BATCH);
        this.alone = Math.max(0, this.alone - 1);
        try {
          const built = await this.parts.withLock(() => this.publishBatch(batch));
          for (const b of built) b.w.resolve({ commit: b.commit, base: b.parent });
        } catch (e) {
          const open = batch.filter((w) => !w.settled());
          // The working tree refused the batch and nothing moved: its effects go again one at a
          // time, so only the one whose path is dirty is refused, as committing each alone does.
          if (open.length > 1 && isIdemError(e, "DIRTY_WORKTREE")) {
            this.queue.unshift(...open);
            this.alone = open.length;
            continue;
          }
          // The chain stays: a head it does not end at (refs that moved all the same) is `moved`.
          for (const w of open) w.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Under the lock: builds the batch on the head and publishes what it built in one step. */
  private async publishBatch(batch: Waiting[]): Promise<Built[]> {
    const { objects, publisher } = this.parts;
    const head = await objects.head(this.branch);
    const mover = this.parts.mover();
    // The batch's objects go to disk as one pack (durable repositories), before anything reads
    // them outside this process: the publish's checks and git fall-backs, the ref transaction.
    const pack = objects.packBatch();
    let built: Built[];
    try {
      built = await this.build(batch, head, mover, pack);
    } finally {
      await pack.flush();
    }
    const last = built.at(-1);
    if (!last) return [];
    const paths = [...new Set(built.flatMap((b) => b.w.paths))];
    const sync = (await publisher.checkedOutBranch()) === this.branch;
    await publisher.publish(
      {
        branch: this.branch,
        base: head,
        commits: built.map((b) => ({ commit: b.commit, key: b.w.key })),
        sync,
        paths,
        mover,
      },
      () => objects.syncObjects(),
      () => this.parts.fault(FAULT_POINTS.INTERPRETER_AFTER_BRANCH_MOVE),
    );
    this.chain.extend(
      head,
      built.map((b) => ({ commit: b.commit, key: b.w.key })),
    );
    return built;
  }

  /**
   * Each waiting effect's commit on the previous one, from the head. An effect whose order is
   * blocked, whose probe the branch has moved past, or whose tree cannot be built is answered now;
   * one whose key the queue's own commits since its probe hold is answered present.
   */
  private async build(
    batch: Waiting[],
    head: string | null,
    mover: Signature,
    pack: PackBatch,
  ): Promise<Built[]> {
    const { objects } = this.parts;
    const built: Built[] = [];
    let parent = head;
    for (const w of batch) {
      // Built in queue order, so the entry it follows is answered or built by now.
      if (w.order?.after?.state === "failed") {
        w.reject(this.blocked());
        continue;
      }
      // The same key twice in one batch (a run claimed again while its earlier claim's apply
      // waits): the later one is probed again once the batch landed, and finds the first there.
      if (built.some((b) => b.w.key === w.key)) {
        w.reject(this.moved(w.base, parent));
        continue;
      }
      if (w.base !== head) {
        // Anything but this queue's own commits since the probe moved the branch: probe again.
        const at = this.chain.since(w.base, w.key, head);
        if (at === undefined) {
          w.reject(this.moved(w.base, head));
          continue;
        }
        if (at !== "absent") {
          w.resolve({ commit: at.present, base: w.base });
          continue;
        }
      }
      let tree: string;
      try {
        const parentTree = await objects.treeOf(parent);
        // A tree that runs git reads what the batch built so far from disk, and writes loose.
        if (!w.inProcess) await pack.flush();
        tree = await w.tree(parentTree, w.inProcess ? pack : objects);
      } catch (e) {
        // Built on a later head than the probed one: the interpreter's probe there decides.
        w.reject(parent !== w.base && isIdemError(e) ? this.moved(w.base, parent) : e);
        continue;
      }
      const body = serializeCommit(tree, parent ? [parent] : [], mover, w.message);
      const commit = await pack.writeObject("commit", body);
      built.push({ w, commit, parent });
      parent = commit;
    }
    return built;
  }

  private blocked(): IdemError {
    return new IdemError(
      "ORDER_BLOCKED",
      `repo "${this.alias}": the apply this effect follows on ${this.branch} failed; this one was not applied`,
    );
  }

  private moved(base: string | null, head: string | null): IdemError {
    return new IdemError(
      "TARGET_MOVED",
      `repo "${this.alias}": ${this.branch} moved from ${base} to ${head} since the probe`,
      { details: { base, head } },
    );
  }
}
