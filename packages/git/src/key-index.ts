import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { refComponent } from "./git-checks.js";
import { EFFECT_TRAILER } from "./git-names.js";
import type { ObjectFormat } from "./plumbing/git-objects.js";
import type { RepoObjects } from "./plumbing/repo-objects.js";
import { runGit } from "./plumbing/run-git.js";

/** A lookup that answered where an effect key stands on a branch. */
export type KeyLookup = { found: true; commit: string } | { found: false; head: string | null };

/** Where a branch's key index lives: refs/idem/b/<encoded branch>. */
function keyPrefix(branch: string): string {
  return `refs/idem/b/${refComponent(branch)}/k`;
}

/** The ref that indexes an effect key on a branch: `refs/idem/b/<branch>/k/<encoded key>`. Pure. */
export function keyRef(branch: string, key: string): string {
  return `${keyPrefix(branch)}/${refComponent(key)}`;
}

/**
 * The branch watermark: every key commit at or below it has its key ref, and every key ref of the
 * branch points at or below it (see `KeyIndex.catchUpLines`). Pure.
 */
export function watermarkRef(branch: string): string {
  return `refs/idem/b/${refComponent(branch)}/w`;
}

const ZERO = (format: ObjectFormat) => "0".repeat(format === "sha1" ? 40 : 64);

/**
 * The index of effect keys of one repository: key refs and the watermark per branch, read from
 * their files (`RepoObjects.ref`), with bounded `git log` scans where refs cannot answer.
 * Probes are never O(history) except once per process for a repo without idem's refs.
 */
export class KeyIndex {
  private readonly scanCache = new Map<string, { head: string; keys: Map<string, string> }>();
  /** Full scans under way, by branch and head: probes asking at once share one `git log`. */
  private readonly scanning = new Map<string, Promise<Map<string, string>>>();
  private lastReachable: { from: string; to: string; yes: boolean } | undefined;

  constructor(private readonly objects: RepoObjects) {}

  /** `ancestor` is reachable from `descendant` (or equal). */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    if (ancestor === descendant) return true;
    const r = await runGit(
      this.objects.path,
      ["merge-base", "--is-ancestor", ancestor, descendant],
      { okCodes: [1, 128] },
    );
    return r.code === 0;
  }

  /**
   * Effect keys carried by commits in a range (git log arguments such as `base..head` or `head`),
   * newest first. Linear in the range: callers bound it.
   */
  async scanRange(range: string[]): Promise<Map<string, string[]>> {
    const keys = new Map<string, string[]>();
    forEachKey(await this.log(range, false), (k, sha) => {
      const list = keys.get(k);
      if (list) list.push(sha);
      else keys.set(k, [sha]);
    });
    return keys;
  }

  /**
   * The commits of a range that a later commit in it reverts and that stay reverted: `git revert`
   * writes `This reverts commit <sha>.` in its message; a revert that is itself reverted puts its
   * commit back. One `git log --grep` of the range.
   */
  async revertedIn(range: string[]): Promise<Set<string>> {
    const { stdout } = await runGit(this.objects.path, [
      "log",
      "--format=%H%x00%B%x00",
      "--grep=^This reverts commit [0-9a-f]",
      ...range,
      "--",
    ]);
    const reverts = new Map<string, string>();
    const parts = stdout.toString("utf8").split("\0");
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const sha = (parts[i] as string).trim();
      const target = /^This reverts commit ([0-9a-f]{40,64})\b/m.exec(parts[i + 1] as string)?.[1];
      if (sha && target) reverts.set(sha, target);
    }
    const reverted = new Set<string>();
    const isReverted = (sha: string, depth = 0): boolean => {
      if (depth > 64) return false;
      for (const [revert, target] of reverts)
        if (target === sha && !isReverted(revert, depth + 1)) return true;
      return false;
    };
    for (const target of new Set(reverts.values())) if (isReverted(target)) reverted.add(target);
    return reverted;
  }

  /**
   * The `git log` of a range, one `%H NUL %B NUL` entry per commit carrying a key. `large` (a whole
   * branch): git writes to a temporary file instead of a pipe, so a busy event loop (a replay plan
   * reading the journal meanwhile) never stalls it on a full pipe; the file is read once at the end
   * (a pipe after all when no temporary folder can be made). Its folder is made, read and removed synchronously (three small calls): on a busy event loop
   * each asynchronous call would wait its turn on the scan's critical path.
   */
  private async log(range: string[], large: boolean): Promise<string> {
    const args = ["log", "--format=%H%x00%B%x00", `--grep=^${EFFECT_TRAILER}:`, ...range, "--"];
    const dir = large ? scanFolder() : undefined;
    if (dir === undefined) return (await runGit(this.objects.path, args)).stdout.toString("utf8");
    try {
      const file = join(dir, "log");
      await runGit(this.objects.path, ["log", `--output=${file}`, ...args.slice(1)]);
      return readFileSync(file, "utf8");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /**
   * Where `key` stands on `branch`, cheaply in history length. The key's ref is trusted without an
   * ancestry walk when the branch watermark is reachable from the branch (every key ref of the
   * branch points at or below its watermark, see `catchUpLines`); otherwise (the branch was reset or
   * rewritten below the watermark) the ref counts only if its commit is reachable from the branch.
   * A key without a trusted ref is looked for by a scan bounded by the hint's base, or by the
   * watermark; only a repo without idem's refs (a clone, a restore from backup) pays one full scan,
   * cached for this process.
   */
  async lookupKey(branch: string, key: string, hintBase?: string | null): Promise<KeyLookup> {
    const catFile = this.objects.catFile;
    const head = await this.objects.head(branch);
    if (head === null) return { found: false, head: null };
    const [ref, wm] = await Promise.all([
      this.objects.ref(keyRef(branch, key)),
      this.objects.ref(watermarkRef(branch)),
    ]);
    const wmOnBranch = wm !== undefined && (await this.reachable(wm, head));
    if (ref && (wmOnBranch || (await this.isAncestor(ref, head))))
      return { found: true, commit: ref };
    let from: string | undefined;
    if (hintBase && (await catFile.resolve(hintBase)) && (await this.isAncestor(hintBase, head))) {
      from = hintBase;
    } else if (wmOnBranch) from = wm;
    if (from !== undefined) {
      if (from === head) return { found: false, head };
      const found = (await this.scanRange([`${from}..${head}`])).get(key);
      return found?.[0] ? { found: true, commit: found[0] } : { found: false, head };
    }
    const all = await this.fullScan(branch, head);
    const c = all.get(key);
    return c ? { found: true, commit: c } : { found: false, head };
  }

  /** `isAncestor`, remembering the last answer (a watermark asked about the same head). */
  private async reachable(from: string, to: string): Promise<boolean> {
    if (from === to) return true;
    const last = this.lastReachable;
    if (last && last.from === from && last.to === to) return last.yes;
    const yes = await this.isAncestor(from, to);
    this.lastReachable = { from, to, yes };
    return yes;
  }

  /**
   * Many keys on one branch at once (replay): with the watermark on the branch, each key's ref
   * plus one scan of `watermark..head`; otherwise one full scan of the branch.
   */
  async lookupKeys(branch: string, head: string, keys: string[]): Promise<Map<string, string>> {
    const wm = await this.objects.ref(watermarkRef(branch));
    if (wm === undefined || !(await this.reachable(wm, head))) return this.fullScan(branch, head);
    const out = new Map<string, string>();
    const recent =
      wm === head ? new Map<string, string[]>() : await this.scanRange([`${wm}..${head}`]);
    for (const k of keys) {
      const c = recent.get(k)?.[0] ?? (await this.objects.ref(keyRef(branch, k)));
      if (c) out.set(k, c);
    }
    return out;
  }

  /**
   * Every key reachable from `head`, cached per branch and extended incrementally; the probes a
   * pipeline starts at once on a branch without idem's refs wait for one scan of the same head.
   */
  private fullScan(branch: string, head: string): Promise<Map<string, string>> {
    const at = `${branch}\0${head}`;
    let scan = this.scanning.get(at);
    if (!scan) {
      scan = this.scanBranch(branch, head).finally(() => this.scanning.delete(at));
      this.scanning.set(at, scan);
    }
    return scan;
  }

  private async scanBranch(branch: string, head: string): Promise<Map<string, string>> {
    const cached = this.scanCache.get(branch);
    let keys: Map<string, string>;
    let range: string[];
    if (cached && (await this.isAncestor(cached.head, head))) {
      if (cached.head === head) return cached.keys;
      keys = new Map(cached.keys);
      range = [`${cached.head}..${head}`];
    } else {
      keys = new Map();
      range = [head];
    }
    // Newest first: a key's first commit in the range wins, and one already known stays.
    forEachKey(await this.log(range, true), (k, sha) => {
      if (!keys.has(k)) keys.set(k, sha);
    });
    this.scanCache.set(branch, { head, keys });
    return keys;
  }

  /**
   * The ref updates that keep the branch's key index true when the branch moves from `base` to
   * `commit` (whose own key ref the caller sets). The watermark `w` of a branch keeps two promises:
   * every commit carrying a key at or below `w` has its key ref, and every key ref of the branch
   * points at or below `w`. Usually `w` is `base` and only moves. When it is not below `base` (a
   * human reset or rewrote the branch, or the refs are missing), the branch is scanned once and the
   * key refs of commits no longer on it are deleted in the same transaction.
   */
  async catchUpLines(
    branch: string,
    base: string | null,
    commit: string,
    key: string,
  ): Promise<string[]> {
    const { format } = await this.objects.layout();
    const w = watermarkRef(branch);
    const wm = await this.objects.ref(w);
    const moveW = `update ${w} ${commit} ${wm ?? ZERO(format)}`;
    if (base !== null && wm === base) return [moveW];
    const lines: string[] = [];
    if (base !== null && wm && (await this.isAncestor(wm, base))) {
      for (const [k, shas] of await this.scanRange([`${wm}..${base}`])) {
        if (k === key) continue;
        if ((await this.objects.ref(keyRef(branch, k))) !== shas[0])
          lines.push(`update ${keyRef(branch, k)} ${shas[0]}`);
      }
      return [...lines, moveW];
    }
    const onBranch = new Map(base === null ? [] : await this.fullScan(branch, base));
    const existing = new Map<string, string>();
    const prefix = `${keyPrefix(branch)}/`;
    const listed = await runGit(this.objects.path, [
      "for-each-ref",
      "--format=%(objectname) %(refname)",
      prefix,
    ]);
    for (const line of listed.stdout.toString("utf8").split("\n")) {
      const sp = line.indexOf(" ");
      if (sp > 0) existing.set(line.slice(sp + 1), line.slice(0, sp));
    }
    existing.delete(keyRef(branch, key));
    onBranch.delete(key);
    for (const [k, sha] of onBranch) {
      if (existing.get(keyRef(branch, k)) !== sha) lines.push(`update ${keyRef(branch, k)} ${sha}`);
    }
    const kept = new Set([...onBranch.keys()].map((k) => keyRef(branch, k)));
    for (const [ref, sha] of existing) {
      if (!kept.has(ref)) lines.push(`delete ${ref} ${sha}`);
    }
    return [...lines, moveW];
  }
}

/** A new temporary folder for a scan's file, or undefined when none can be made (then: a pipe). */
function scanFolder(): string | undefined {
  try {
    return mkdtempSync(join(tmpdir(), "idem-scan-"));
  } catch {
    return undefined;
  }
}

/** A key trailer line of a commit message (as `trailerKeys` in the sandbox reads it). */
const KEY_LINE = new RegExp(`^${EFFECT_TRAILER}: (\\S+)\\s*$`, "gm");

/**
 * Calls `visit(key, commit)` for every key trailer of a `%H NUL %B NUL` log, in log order. One
 * regular expression for the whole log and no array of parts: a branch's scan is 10,000s of commits.
 */
function forEachKey(log: string, visit: (key: string, commit: string) => void): void {
  for (let at = 0; ; ) {
    const shaEnd = log.indexOf("\0", at);
    if (shaEnd < 0) return;
    const bodyEnd = log.indexOf("\0", shaEnd + 1);
    if (bodyEnd < 0) return;
    const sha = log.slice(at, shaEnd).trim();
    const body = log.slice(shaEnd + 1, bodyEnd);
    KEY_LINE.lastIndex = 0;
    for (let m = KEY_LINE.exec(body); m !== null; m = KEY_LINE.exec(body))
      visit(m[1] as string, sha);
    at = bodyEnd + 1;
  }
}
