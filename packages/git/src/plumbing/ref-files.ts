import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** What a ref read from the files answers: its oid, null (no such ref), or undefined (ask git). */
export type RefFileAnswer = string | null | undefined;

/**
 * Reads refs the way git's files backend stores them, in process: the loose file
 * `<gitdir>/<refname>` first, then `packed-refs` (parsed once, read again when its inode, size or
 * mtime changes). A read costs a system call or two instead of a round trip through `cat-file`.
 *
 * git writes both through a lock file renamed into place, so a read sees the old or the new value,
 * never a torn one, and reading loose before packed is git's own order (a concurrent `pack-refs`
 * writes packed-refs before it deletes the loose file). Anything this does not read as git would
 * answers undefined, and the caller asks git: a linked worktree (`commondir`), the reftable
 * backend, a symbolic ref, a file that is not one oid, an unreadable file.
 */
export class RefFiles {
  /** False where git keeps refs elsewhere (a linked worktree, the reftable backend): ask git. */
  readonly usable: boolean;
  private packed: { ino: number; size: number; mtimeNs: bigint; refs: Map<string, string> } | null =
    null;

  constructor(
    private readonly gitDir: string,
    private readonly hexLength: number,
  ) {
    this.usable = !existsSync(join(gitDir, "commondir")) && !existsSync(join(gitDir, "reftable"));
  }

  /** The oid `refname` (a full name under refs/) points at, null when it does not exist, or undefined. */
  read(refname: string): RefFileAnswer {
    if (!this.usable || !refname.startsWith("refs/") || refname.includes("..")) return undefined;
    let text: string;
    try {
      text = readFileSync(join(this.gitDir, refname), "latin1");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
      return this.readPacked(refname);
    }
    const oid = text.endsWith("\n") ? text.slice(0, -1) : text;
    return this.isOid(oid) ? oid : undefined;
  }

  private readPacked(refname: string): RefFileAnswer {
    const file = join(this.gitDir, "packed-refs");
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(file, { bigint: true, throwIfNoEntry: false });
    } catch {
      return undefined;
    }
    if (st === undefined) {
      this.packed = null;
      return null;
    }
    const ino = Number(st.ino);
    const size = Number(st.size);
    const p = this.packed;
    if (!p || p.ino !== ino || p.size !== size || p.mtimeNs !== st.mtimeNs) {
      let text: string;
      try {
        text = readFileSync(file, "latin1");
      } catch {
        return undefined;
      }
      const refs = new Map<string, string>();
      for (const line of text.split("\n")) {
        if (line === "" || line.startsWith("#") || line.startsWith("^")) continue;
        const sp = line.indexOf(" ");
        const oid = line.slice(0, sp);
        if (sp < 0 || !this.isOid(oid)) return undefined;
        refs.set(line.slice(sp + 1), oid);
      }
      this.packed = { ino, size, mtimeNs: st.mtimeNs, refs };
    }
    return this.packed?.refs.get(refname) ?? null;
  }

  private isOid(s: string): boolean {
    return s.length === this.hexLength && /^[0-9a-f]+$/.test(s);
  }
}
