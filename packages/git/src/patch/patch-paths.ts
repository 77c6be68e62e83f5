import { GIT_ATTRIBUTES_MAX_LINE, isGitAttributesPath } from "@idem/kit";
import { IdemError } from "@idem/schema";
import { checkRelativePath, refuse } from "../git-checks.js";

/** One file of a unified diff, with the paths its headers name. */
export interface PatchFile {
  oldPath: string | null;
  newPath: string | null;
  newMode?: string;
  /** The mode an `old mode` / `deleted file mode` line names. */
  oldMode?: string;
}

const C_ESCAPES: Record<string, number> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  "\\": 92,
};

/** Undoes git's C-style quoting of a path ("a/t\303\251st"). */
export function unquoteGitPath(s: string): string {
  if (!s.startsWith('"')) return s;
  const bytes: number[] = [];
  let i = 1;
  for (; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '"') break;
    if (c === "\\") {
      const n = s[i + 1] as string;
      if (/[0-7]/.test(n)) {
        bytes.push(Number.parseInt(s.slice(i + 1, i + 4), 8));
        i += 3;
      } else if (n in C_ESCAPES) {
        bytes.push(C_ESCAPES[n] as number);
        i += 1;
      } else {
        throw new IdemError("INVALID_INPUT", `bad escape in patch path ${s}`);
      }
    } else {
      bytes.push(...Buffer.from(c, "utf8"));
    }
  }
  if (i !== s.length - 1) throw new IdemError("INVALID_INPUT", `bad quoting in patch path ${s}`);
  return Buffer.from(bytes).toString("utf8");
}

/** Takes one path token (quoted or not) off the front of `s`; returns it and the rest. */
function takePath(s: string): [string, string] {
  if (s.startsWith('"')) {
    let i = 1;
    while (i < s.length && s[i] !== '"') i += s[i] === "\\" ? 2 : 1;
    return [unquoteGitPath(s.slice(0, i + 1)), s.slice(i + 1)];
  }
  return [s, ""];
}

function stripPrefix(p: string, prefix: string, field: string): string {
  if (p === "/dev/null") return p;
  if (!p.startsWith(prefix))
    refuse(field, `path "${p}" does not start with ${prefix} (patches are applied with -p1)`);
  return p.slice(prefix.length);
}

/** git's skip_tree_prefix with -p1: what follows the first `/`, null when that is the first byte. */
function skipTreePrefix(s: string): string | null {
  const i = s.indexOf("/");
  return i <= 0 ? null : s.slice(i + 1);
}

/**
 * The name of an unquoted `diff --git <a> <b>` line as git's git_header_name reads it (apply.c,
 * -p1): the name both halves give after their first folder (any, not only `a/` and `b/`),
 * separated by one space or tab; null when the halves differ (a rename names its paths elsewhere).
 */
export function gitHeaderName(rest: string): string | null {
  const name = skipTreePrefix(rest);
  if (name === null) return null;
  for (let len = 0; len < name.length; len++) {
    const c = name[len];
    if (c !== " " && c !== "\t") continue;
    if (len + 1 >= name.length) return null;
    const second = skipTreePrefix(name.slice(len + 1));
    if (second !== null && second.length === len && name.startsWith(second)) return second;
  }
  return null;
}

/** The path on a ---/+++ line, without a trailing tab and timestamp. */
function headerPath(rest: string): string {
  if (rest.startsWith('"')) return takePath(rest)[0];
  const tab = rest.indexOf("\t");
  return tab >= 0 ? rest.slice(0, tab) : rest.replace(/\s+$/, "");
}

/**
 * Reads every path a unified diff's headers name and checks each against the sandbox: nothing
 * absolute, no `..`, nothing under `.git`, no symlinks created (mode 120000), no submodules.
 * @throws IdemError SANDBOX_VIOLATION for an escaping path or mode; INVALID_INPUT for a binary or
 * malformed patch (a patch git could not apply as text: no file, a hunk shorter than its header).
 */
export function parsePatchFiles(patch: string): PatchFile[] {
  if (patch.includes("\0"))
    throw new IdemError(
      "INVALID_INPUT",
      "patch contains NUL bytes: binary patches are not supported",
    );
  const files: PatchFile[] = [];
  let cur: PatchFile | undefined;
  let inHunk = false;
  let oldLeft = 0;
  let newLeft = 0;
  const lines = patch.split("\n");
  // The empty string after the last newline is not a line of the patch.
  if (patch.endsWith("\n")) lines.pop();
  let lineNo = 0;
  for (let raw of lines) {
    lineNo += 1;
    if (raw.endsWith("\r")) raw = raw.slice(0, -1);
    const line = raw;
    if (line.startsWith("diff --git ")) {
      inHunk = false;
      cur = { oldPath: null, newPath: null };
      files.push(cur);
      const rest = line.slice("diff --git ".length);
      // Only checked for safety here; the ---/+++ and rename lines say which paths are which.
      if (rest.startsWith('"')) {
        const [a, tail] = takePath(rest);
        const [b] = takePath(tail.trimStart());
        checkRelativePath("patch", stripPrefix(a, "a/", "patch"));
        checkRelativePath("patch", stripPrefix(b, "b/", "patch"));
        cur.oldPath = stripPrefix(a, "a/", "patch");
        cur.newPath = stripPrefix(b, "b/", "patch");
      } else {
        // The name git takes from this line when both halves name it (its def_name): the one a
        // new or deleted file, or a mode change, without ---/+++ lines applies to. Otherwise the
        // ---/+++ and rename lines name the paths, each checked where it is read.
        const name = gitHeaderName(rest);
        if (name !== null) {
          checkRelativePath("patch", name);
          cur.oldPath = name;
          cur.newPath = name;
        }
      }
      continue;
    }
    if (inHunk) {
      const c = line[0];
      if (c === "\\") continue;
      if (c === " " || line === "") {
        oldLeft -= 1;
        newLeft -= 1;
      } else if (c === "-") oldLeft -= 1;
      else if (c === "+") {
        newLeft -= 1;
        if (cur?.newPath && isGitAttributesPath(cur.newPath)) checkAttributesLine(line);
      } else corrupt(lineNo, "a hunk ends before the lines its header counts");
      if (inHunk) {
        if (oldLeft <= 0 && newLeft <= 0) inHunk = false;
        continue;
      }
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      if (!cur) {
        cur = { oldPath: null, newPath: null };
        files.push(cur);
      }
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      inHunk = oldLeft > 0 || newLeft > 0;
      continue;
    }
    if (line.startsWith("--- ") || line.startsWith("+++ ")) {
      inHunk = false;
      const isOld = line.startsWith("---");
      if (
        !cur ||
        (isOld &&
          cur.oldPath !== null &&
          cur.newPath !== null &&
          files.length > 0 &&
          hasBothHeaders(cur))
      ) {
        cur = { oldPath: null, newPath: null };
        files.push(cur);
      }
      const p = stripPrefix(headerPath(line.slice(4)), isOld ? "a/" : "b/", "patch");
      if (p !== "/dev/null") checkRelativePath("patch", p);
      if (isOld) {
        cur.oldPath = p === "/dev/null" ? null : p;
        seen.set(cur, (seen.get(cur) ?? 0) | 1);
      } else {
        cur.newPath = p === "/dev/null" ? null : p;
        seen.set(cur, (seen.get(cur) ?? 0) | 2);
      }
      continue;
    }
    if (!cur) continue;
    // git apply's header table (apply.c, parse_git_diff_header): `rename old`/`rename new` are
    // the older spellings of `rename from`/`rename to`; `copy old`/`copy new` are not git's.
    const rename = /^(?:rename (from|to|old|new)|copy (from|to)) (.*)$/.exec(line);
    const modeLine = /^(new file mode|new mode|deleted file mode|old mode) ([0-7]+)$/.exec(line);
    if (rename) {
      const p = takePath(rename[3] as string)[0];
      checkRelativePath("patch", p);
      const side = rename[1] ?? rename[2];
      if (side === "from" || side === "old") cur.oldPath = p;
      else cur.newPath = p;
    } else if (modeLine) {
      const m = modeLine;
      const mode = m[2] as string;
      if (mode === "120000") refuse("patch", "may not create or change symlinks (mode 120000)");
      if (mode === "160000") refuse("patch", "may not touch submodules (mode 160000)");
      if (m[1] === "new file mode" || m[1] === "new mode") cur.newMode = mode;
      else cur.oldMode = mode;
    } else if (/^index [0-9a-f]+\.\.[0-9a-f]+ 1[26]0000$/.test(line)) {
      refuse("patch", "may not change symlinks or submodules");
    } else if (line.startsWith("GIT binary patch") || /^Binary files .* differ$/.test(line)) {
      throw new IdemError(
        "INVALID_INPUT",
        "binary patches are not supported: send the file with git.commit instead",
      );
    }
  }
  if (inHunk) corrupt(lineNo, "the last hunk is cut short");
  if (files.length === 0)
    throw new IdemError("INVALID_INPUT", "patch names no files: not a unified diff");
  for (const f of files) {
    if (f.oldPath === null && f.newPath === null) {
      throw new IdemError("INVALID_INPUT", "patch has a file section without paths");
    }
  }
  return files;
}

/**
 * A line a patch adds to a `.gitattributes` file (after its `+`): git fsck refuses such a file with
 * a line of GIT_ATTRIBUTES_MAX_LINE bytes or more.
 * @throws IdemError SANDBOX_VIOLATION naming the patch
 */
function checkAttributesLine(line: string): void {
  if (Buffer.byteLength(line, "utf8") - 1 >= GIT_ATTRIBUTES_MAX_LINE)
    refuse(
      "patch",
      `adds a line of ${GIT_ATTRIBUTES_MAX_LINE} bytes or more to a .gitattributes file, which git fsck refuses`,
    );
}

/** A patch git would refuse as corrupt. @throws IdemError INVALID_INPUT */
function corrupt(line: number, why: string): never {
  throw new IdemError("INVALID_INPUT", `corrupt patch at line ${line}: ${why}`);
}

const seen = new WeakMap<PatchFile, number>();
function hasBothHeaders(f: PatchFile): boolean {
  return (seen.get(f) ?? 0) === 3;
}

/** Every path a patch touches, old and new. */
export function patchPaths(files: PatchFile[]): string[] {
  const set = new Set<string>();
  for (const f of files) {
    if (f.oldPath) set.add(f.oldPath);
    if (f.newPath) set.add(f.newPath);
  }
  return [...set];
}
