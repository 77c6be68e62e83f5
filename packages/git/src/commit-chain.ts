/** Commits a chain keeps at most; past it, it starts again empty (a probe then asks git). */
const MAX_COMMITS = 4096;

/**
 * The commits one process put on a branch in a row (a local branch's batches, a remote's pushes),
 * from `start`, each with its effect's key: an effect probed at one of them is checked against the
 * keys published since, in memory, without a git process.
 */
export class CommitChain {
  private chain: { start: string | null; commits: string[]; keys: string[] } | undefined;

  /** `commits` went onto the branch from `head`, in order (a head the chain does not end at starts it again). */
  extend(head: string | null, commits: readonly { commit: string; key: string }[]): void {
    if (!this.chain || this.end() !== head) this.chain = { start: head, commits: [], keys: [] };
    const chain = this.chain;
    for (const c of commits) {
      chain.commits.push(c.commit);
      chain.keys.push(c.key);
    }
    if (chain.commits.length > MAX_COMMITS) this.chain = undefined;
  }

  /** Forgets every commit (the branch moved in a way the chain cannot follow). */
  reset(): void {
    this.chain = undefined;
  }

  /**
   * Where `key`, probed absent at `base`, stands at `head`: present (the chain's commit of it),
   * absent, or undefined when the chain does not lead from `base` to `head` (it cannot tell).
   */
  since(
    base: string | null,
    key: string,
    head: string | null,
  ): { present: string } | "absent" | undefined {
    const c = this.chain;
    if (!c || this.end() !== head) return undefined;
    const at = base === c.start ? 0 : base === null ? -1 : c.commits.indexOf(base) + 1;
    if (at <= 0 && base !== c.start) return undefined;
    const i = c.keys.indexOf(key, at);
    return i >= 0 ? { present: c.commits[i] as string } : "absent";
  }

  private end(): string | null | undefined {
    const c = this.chain;
    return c ? (c.commits.at(-1) ?? c.start) : undefined;
  }
}
