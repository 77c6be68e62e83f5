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
          await this.parts.withLock(() => this.pushBurst(burst));
        } catch (e) {
          for (const w of burst) w.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Builds and pushes one burst; settles every entry it can (the rest are rejected by drain). */
  private async pushBurst(burst: Waiting[]): Promise<void> {
    const { objects, keys, publisher } = this.parts;
    const branch = this.branch;
    let pending = burst;
    for (let round = 0; ; round++) {
      const tip = await objects.head(branch);
      const built: { w: Waiting; commit: string; parent: string | null }[] = [];
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
      if (built.length === 0 || parent === null) return;
      const outcome = await this.mirror.remote.push(branch, parent, tip);
      if (outcome === "pushed") {
        this.parts.fault(FAULT_POINTS.INTERPRETER_AFTER_PUSH);
        for (const b of built) {
          // The mirror follows the remote, key index included; a failure here only costs a scan.
          await publisher
            .publish({
              branch,
              base: b.parent,
              commit: b.commit,
              key: b.w.key,
              sync: false,
              paths: b.w.paths,
            })
            .catch(() => {});
          b.w.resolve({ commit: b.commit, base: b.parent });
        }
        return;
      }
      const now = await this.mirror.fetchAfterRejection(branch);
      pending = built.map((b) => b.w);
      if (round + 1 >= MAX_REBUILDS) {
        for (const w of pending) w.reject(this.moved(tip, now));
        return;
      }
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
