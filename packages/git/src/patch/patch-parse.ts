/**
 * `git apply --cached --whitespace=nowarn` done in process for the plain patches `git diff` writes,
 * so a git.patch costs no git process. It follows git's apply.c step by step (hunk search order,
 * lines a hunk already patched, hunks that must match at the start or end of a file, "\ No newline
 * at end of file") with git's defaults: no fuzz, no whitespace leniency, no recount, no overlap.
 *
 * It answers only when it is sure to give git's own answer, and returns null otherwise, so the
 * caller asks git: anything outside the plain subset (renames, copies, mode changes, quoted or
 * unusual paths, CR bytes, empty files without hunks, a path twice, text around the diff, a marker
 * line other than git's English one, a file that is a symlink or submodule or sits under one), and
 * every patch that does not apply (git then says why and checks the reverse).
 */

/** One hunk: what it removes and puts back, as lines that keep their newline (but the last may not). */
export interface Hunk {
  oldPos: number;
  newPos: number;
  pre: Buffer[];
  post: Buffer[];
  /** Context lines before the first change and after the last one. */
  leading: number;
  trailing: number;
}

/** One file of a plain patch. */
export interface PlainSection {
  path: string;
  kind: "modify" | "create" | "delete";
  /** The mode a created file gets. */
  mode?: string;
  hunks: Hunk[];
}

/** A file of the base tree as the applier sees it. */
export type BaseFile =
  | { kind: "file"; mode: string; content: Buffer }
  /** Nothing at the path, and every folder on the way is a folder or missing. */
  | { kind: "absent" }
  /** A folder, symlink or submodule at the path or on the way: git decides. */
  | { kind: "other" };

/** A path's content after the patch: null when the patch deletes it. */
export interface PlainResult {
  path: string;
  content: Buffer | null;
  mode: string;
}

/** The file modes a plain patch may name: regular and executable files. */
export const REGULAR_MODES = new Set(["100644", "100755"]);
const MARKER = "\\ No newline at end of file";
const MAX_POS = 0x7fffffff;

/**
 * A path git writes as is (no quoting) and accepts in an index: ASCII letters, digits and `._+@=,-`,
 * no empty, `.` or `..` component, nothing git refuses as `.git` (including the NTFS spellings).
 */
export function isPlainPath(p: string): boolean {
  if (p.length === 0 || p.length > 4096 || !/^[A-Za-z0-9._+@=,/-]+$/.test(p)) return false;
  for (const c of p.split("/")) {
    if (c === "" || c === "." || c === "..") return false;
    if (/^\.git\.*$/i.test(c) || /^git~1\.*$/i.test(c)) return false;
  }
  return !p.startsWith("-");
}

/** Splits a patch into lines (without their `\n`); null when it does not end with one. */
function splitLines(patch: Buffer): Buffer[] | null {
  if (patch.length === 0 || patch[patch.length - 1] !== 0x0a) return null;
  const lines: Buffer[] = [];
  let start = 0;
  for (;;) {
    const nl = patch.indexOf(0x0a, start);
    if (nl < 0) break;
    lines.push(patch.subarray(start, nl));
    start = nl + 1;
  }
  return lines;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Reads a patch made only of plain file sections (see the file comment). Null: outside the subset,
 * let git read it.
 */
export function parsePlainPatch(patch: Buffer): PlainSection[] | null {
  if (patch.includes(0x0d) || patch.includes(0)) return null;
  const lines = splitLines(patch);
  if (!lines) return null;
  const text = (b: Buffer) => b.toString("latin1");
  // Blank lines after the last hunk are skipped as garbage by git (unless a hunk counts them).
  let tail = lines.length;
  while (tail > 0 && (lines[tail - 1] as Buffer).length === 0) tail--;
  const sections: PlainSection[] = [];
  let i = 0;
  while (i < lines.length) {
    if (sections.length > 0 && i >= tail) break;
    const head = text(lines[i] as Buffer);
    if (!head.startsWith("diff --git ")) return null;
    const rest = head.slice("diff --git ".length);
    const half = (rest.length - 5) / 2;
    if (!Number.isInteger(half) || half < 1) return null;
    const path = rest.slice(2, 2 + half);
    if (rest !== `a/${path} b/${path}` || !isPlainPath(path)) return null;
    i++;
    let newMode: string | undefined;
    let deletedMode: string | undefined;
    let index = false;
    let indexMode = false;
    for (; i < lines.length; i++) {
      const l = text(lines[i] as Buffer);
      const created = /^new file mode ([0-7]+)$/.exec(l);
      const deleted = /^deleted file mode ([0-7]+)$/.exec(l);
      const idx = /^index [0-9a-f]{4,64}\.\.[0-9a-f]{4,64}(?: ([0-7]+))?$/.exec(l);
      if (created) {
        if (newMode !== undefined) return null;
        newMode = created[1];
      } else if (deleted) {
        if (deletedMode !== undefined) return null;
        deletedMode = deleted[1];
      } else if (idx) {
        if (index) return null;
        index = true;
        // A mode here is the file's old mode: git only warns when it differs from the index.
        if (idx[1] !== undefined && !REGULAR_MODES.has(idx[1])) return null;
        indexMode = idx[1] !== undefined;
      } else break;
    }
    if (newMode !== undefined && deletedMode !== undefined) return null;
    if (indexMode && (newMode !== undefined || deletedMode !== undefined)) return null;
    if (newMode !== undefined && !REGULAR_MODES.has(newMode)) return null;
    if (deletedMode !== undefined && !REGULAR_MODES.has(deletedMode)) return null;
    const kind = newMode !== undefined ? "create" : deletedMode !== undefined ? "delete" : "modify";
    const minus = lines[i] === undefined ? "" : text(lines[i] as Buffer);
    const plus = lines[i + 1] === undefined ? "" : text(lines[i + 1] as Buffer);
    if (minus !== (kind === "create" ? "--- /dev/null" : `--- a/${path}`)) return null;
    if (plus !== (kind === "delete" ? "+++ /dev/null" : `+++ b/${path}`)) return null;
    i += 2;
    const hunks: Hunk[] = [];
    while (i < lines.length && text(lines[i] as Buffer).startsWith("@@ -")) {
      const parsed = parseHunk(lines, i, tail);
      if (!parsed) return null;
      hunks.push(parsed.hunk);
      i = parsed.next;
    }
    if (hunks.length === 0) return null;
    if (kind !== "modify") {
      // git diff writes a created or deleted file as one hunk against nothing.
      const h = hunks[0] as Hunk;
      if (hunks.length !== 1) return null;
      if (kind === "create" && (h.oldPos !== 0 || h.pre.length !== 0)) return null;
      if (kind === "delete" && (h.newPos !== 0 || h.post.length !== 0)) return null;
    }
    sections.push({ path, kind, ...(newMode !== undefined ? { mode: newMode } : {}), hunks });
  }
  if (sections.length === 0) return null;
  // Each path once, and none inside another (git orders such changes by its own rules).
  const paths = new Set<string>();
  for (const s of sections) {
    if (paths.has(s.path)) return null;
    paths.add(s.path);
  }
  for (const p of paths) {
    for (let k = p.indexOf("/"); k >= 0; k = p.indexOf("/", k + 1)) {
      if (paths.has(p.slice(0, k))) return null;
    }
  }
  return sections;
}

/** Reads the hunk whose header is `lines[at]`, as git's parse_fragment does. */
function parseHunk(lines: Buffer[], at: number, tail: number): { hunk: Hunk; next: number } | null {
  const m = HUNK_HEADER.exec((lines[at] as Buffer).toString("latin1"));
  if (!m) return null;
  const num = (s: string | undefined) => (s === undefined ? 1 : Number(s));
  const oldPos = Number(m[1]);
  const oldCount = num(m[2]);
  const newPos = Number(m[3]);
  const newCount = num(m[4]);
  if ([oldPos, oldCount, newPos, newCount].some((n) => !Number.isSafeInteger(n) || n > MAX_POS))
    return null;
  // The body: exactly the counted lines, each ' ', '-', '+' or empty (context), markers apart.
  const body: { type: string; data: Buffer }[] = [];
  let oldLeft = oldCount;
  let newLeft = newCount;
  let i = at + 1;
  const markerAfter = new Set<number>();
  while (oldLeft > 0 || newLeft > 0) {
    const line = lines[i];
    if (line === undefined) return null;
    const c = line.length === 0 ? "" : String.fromCharCode(line[0] as number);
    if (c === "\\") {
      if (line.toString("latin1") !== MARKER || body.length === 0) return null;
      if (markerAfter.has(body.length - 1)) return null;
      markerAfter.add(body.length - 1);
      i++;
      continue;
    }
    if (c === " " || c === "") {
      oldLeft--;
      newLeft--;
    } else if (c === "-") oldLeft--;
    else if (c === "+") newLeft--;
    else return null;
    if (oldLeft < 0 || newLeft < 0) return null;
    body.push({ type: c === "" ? " " : c, data: line.length === 0 ? line : line.subarray(1) });
    i++;
  }
  // A marker right after the counted lines belongs to the hunk too.
  const after = lines[i];
  if (after !== undefined && after.length > 0 && after[0] === 0x5c) {
    if (after.toString("latin1") !== MARKER || markerAfter.has(body.length - 1)) return null;
    markerAfter.add(body.length - 1);
    i++;
  }
  // What may follow: another hunk, another file, or blank lines up to the end.
  const next = lines[i];
  if (next !== undefined && i < tail) {
    const t = next.toString("latin1");
    if (!t.startsWith("@@ -") && !t.startsWith("diff --git ")) return null;
  }
  if (!body.some((b) => b.type !== " ")) return null;
  // Markers only where git diff writes them: after the last line of the old side, of the new side,
  // or of both. An empty context line before a marker is read differently by git: leave it to git.
  for (const k of markerAfter) {
    const b = body[k] as { type: string; data: Buffer };
    const later = body.slice(k + 1);
    if (b.type === " " && (later.length > 0 || b.data.length === 0)) return null;
    if (b.type === "-" && later.some((x) => x.type !== "+")) return null;
    if (b.type === "+" && later.some((x) => x.type !== "-")) return null;
  }
  const pre: Buffer[] = [];
  const post: Buffer[] = [];
  const nl = Buffer.from("\n");
  let leading = 0;
  let trailing = 0;
  let changed = false;
  body.forEach((b, k) => {
    const data = markerAfter.has(k) ? b.data : Buffer.concat([b.data, nl]);
    if (b.type === " ") {
      pre.push(data);
      post.push(data);
      if (!changed) leading++;
      trailing++;
    } else {
      changed = true;
      trailing = 0;
      (b.type === "-" ? pre : post).push(data);
    }
  });
  return { hunk: { oldPos, newPos, pre, post, leading, trailing }, next: i };
}
