import { FAULT_POINTS, IdemError, isIdemError } from "@idem/schema";
import type { BranchPublisher } from "../branch-publisher.js";
import type { KeyIndex } from "../key-index.js";
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
}

interface Waiting extends PushEntry {
  resolve(detail: Record<string, unknown>): void;
  reject(e: unknown): void;
}

/** An effect's commit built in the mirror, on `parent`, waiting for its push. */
interface Built {
  w: Waiting;
  commit: string;
  parent: string | null;
}

/** Pushes per burst: effects waiting at once are built on each other and pushed together. */
const MAX_BURST = 64;
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

  constructor(
    private readonly branch: string,
    private readonly mirror: RemoteMirror,
    private readonly parts: MirrorParts & {
      objects: RepoObjects;
      keys: KeyIndex;
      publisher: BranchPublisher;
    },
  ) {}

  /** Answers `{ commit, base }` once the effect's commit is on the remote branch. */
  push(entry: PushEntry): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...entry, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
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
        this.parts.fault(FAULT_POINTS.INTERPRETER_AFTER_PUSH);
        await this.parts.withLock(() => this.pushed(built.commits));
        return;
      }
      const now = await this.parts.withLock(() => this.mirror.fetchAfterRejection(this.branch));
      pending = built.commits.map((b) => b.w);
      if (round + 1 >= MAX_REBUILDS) {
        for (const w of pending) w.reject(this.moved(built.tip, now));
        return;
      }
    }
  }

  /** After the push: the mirror follows the remote (key index included), then each apply answers. */
  private async pushed(commits: Built[]): Promise<void> {
    for (const b of commits) {
      // A failure here (a probe reset the mirror meanwhile) only costs the next probe a scan.
      await this.parts.publisher
        .publish({
          branch: this.branch,
          base: b.parent,
          commit: b.commit,
          key: b.w.key,
          sync: false,
          paths: b.w.paths,
        })
        .catch(() => {});
      b.w.resolve({ commit: b.commit, base: b.parent });
    }
  }

  /**
   * Under the lock: each waiting effect's commit on the previous one, from the mirror's tip. An
   * effect probed at an older tip is built on the new one only when the tip descends from its probe
   * and its key is not there (present: answered now, without a write).
   */
  private async build(
    pending: Waiting[],
  ): Promise<{ tip: string | null; head: string; commits: Built[] } | undefined> {
    const { objects, keys } = this.parts;
    const branch = this.branch;
    {
      const tip = await objects.head(branch);
      const built: Built[] = [];
      let parent = tip;
      for (const w of pending) {
        if (w.base !== tip) {
          // Probed at an older tip: still absent there and the tip descends from it, or probe again.
          const onTip = w.base === null || (tip !== null && (await keys.isAncestor(w.base, tip)));
          if (!onTip) {
            w.reject(this.moved(w.base, tip));
            continue;
          }
          const found = await keys.lookupKey(branch, w.key, w.base);
          if (found.found) {
            w.resolve({ commit: found.commit, base: w.base });
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
  }

  private moved(base: string | null, head: string | null): IdemError {
    return new IdemError(
      "TARGET_MOVED",
      `repo "${this.mirror.remote.alias}": ${this.branch} on the remote moved from ${base} to ${head} since the probe`,
      { details: { base, head } },
    );
  }
}
