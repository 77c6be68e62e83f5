/**
 * git's own rules for the paths of a tree, so that idem never commits a path git refuses to check
 * out or `git fsck` reports (docs/concepts.md, "What is refused"). Ported from git's source:
 * `verify_path` (read-cache.c) with `core.protectNTFS` and `core.protectHFS` both on, as a clone on
 * Windows or macOS applies them; `is_ntfs_dotgit` and `is_ntfs_dot_generic` (path.c);
 * `is_hfs_dot_generic` (utf8.c); and the tree and blob checks of fsck.c. Pure, never throws.
 */

import { z } from "zod";

/** The code points HFS+ ignores in a name (utf8.c, `next_hfs_char`): `.git\u200c` is `.git`. */
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** fsck's limits for a `.gitattributes` blob (attr.h: ATTR_MAX_LINE_LENGTH, ATTR_MAX_FILE_SIZE). */
export const GIT_ATTRIBUTES_MAX_LINE = 2048;
export const GIT_ATTRIBUTES_MAX_BYTES = 100 * 1024 * 1024;

/** The longest name of one path segment most file systems take (NAME_MAX: 255 bytes). */
export const MAX_SEGMENT_BYTES = 255;

/** A segment for a message: anything but printable ASCII as `\uXXXX`, so nothing hides. */
const shown = (s: string) =>
  s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** `.<needle>` once the code points HFS+ ignores are dropped, in any ASCII case. */
function isHfsDot(name: string, needle: string): boolean {
  const s = name.replace(HFS_IGNORABLE, "");
  return s.length === needle.length + 1 && s[0] === "." && asciiLower(s.slice(1)) === needle;
}

/** Only spaces and periods from `i` to the end or to an NTFS stream (`:`). */
function onlySpacesAndPeriods(name: string, i: number): boolean {
  for (; i < name.length; i++) {
    const c = name[i];
    if (c === ":") return true;
    if (c !== " " && c !== ".") return false;
  }
  return true;
}

/** `.git` as NTFS reads it: trailing spaces and dots dropped, `git~1`, any stream (`.git::$DATA`). */
function isNtfsDotGit(name: string): boolean {
  return /^(?:\.git|git~1)[. ]*(?::|$)/i.test(name);
}

/**
 * `.<needle>` as NTFS reads it (path.c, `is_ntfs_dot_generic`): with trailing spaces and dots or a
 * stream, as the 8.3 short name `<first six>~1` to `~4`, or as the fall-back short name that
 * Windows derives from a hash (`shortPrefix`, e.g. `gi7eba~1` for `.gitmodules`).
 */
function isNtfsDot(name: string, needle: string, shortPrefix: string): boolean {
  if (name[0] === "." && asciiLower(name.slice(1, 1 + needle.length)) === needle)
    return onlySpacesAndPeriods(name, needle.length + 1);
  const d7 = name[7];
  if (
    asciiLower(name.slice(0, 6)) === needle.slice(0, 6) &&
    name[6] === "~" &&
    d7 !== undefined &&
    d7 >= "1" &&
    d7 <= "4"
  )
    return onlySpacesAndPeriods(name, 8);
  let sawTilde = false;
  for (let i = 0; i < 8; i++) {
    const c = name[i];
    if (c === undefined) return false;
    if (sawTilde) {
      if (c < "0" || c > "9") return false;
    } else if (c === "~") {
      i += 1;
      const n = name[i];
      if (n === undefined || n < "1" || n > "9") return false;
      sawTilde = true;
    } else if (i >= 6 || c.charCodeAt(0) > 0x7f || asciiLower(c) !== shortPrefix[i]) {
      return false;
    }
  }
  return onlySpacesAndPeriods(name, 8);
}

/** Whether a path segment is `.git` in any spelling git refuses on some file system. */
export function isDotGitSegment(name: string): boolean {
  return isHfsDot(name, "git") || isNtfsDotGit(name);
}

/** Whether a path segment is `.gitmodules` in any spelling git or fsck takes for it. */
export function isDotGitModulesSegment(name: string): boolean {
  return isHfsDot(name, "gitmodules") || isNtfsDot(name, "gitmodules", "gi7eba");
}

/** Whether a path segment is `.gitattributes` in any spelling fsck takes for it. */
export function isDotGitAttributesSegment(name: string): boolean {
  return isHfsDot(name, "gitattributes") || isNtfsDot(name, "gitattributes", "gi7d29");
}

/**
 * Why git would refuse `path` in a tree (or `git fsck` report it), or undefined when it is fine.
 *
 * Refused, per segment: empty, `.` and `..`; `.git` in any case, with trailing spaces or dots, as
 * the NTFS short name `git~1`, with an NTFS stream (`.git::$INDEX_ALLOCATION`), or with code points
 * HFS+ ignores (`.git\u200c`); `.gitmodules` in all those spellings and its short names (idem writes
 * no submodules, and fsck checks that file's content); a folder named `.gitattributes` (fsck wants
 * a file there). Also a segment longer than {@link MAX_SEGMENT_BYTES} bytes of UTF-8, which no
 * common file system can create (ENAMETOOLONG). Never throws.
 */
export function unsafeGitPath(path: string): string | undefined {
  const parts = path.split("/");
  for (let i = 0; i < parts.length; i++) {
    const s = parts[i] as string;
    if (s === "" || s === "." || s === "..") return "may not contain empty, '.' or '..' segments";
    if (isDotGitSegment(s))
      return `may not touch .git (git reads the segment "${shown(s)}" as .git)`;
    if (isDotGitModulesSegment(s))
      return `may not touch .gitmodules (the segment "${shown(s)}"): idem writes no submodules`;
    if (i < parts.length - 1 && isDotGitAttributesSegment(s))
      return `may not make "${shown(s)}" a folder: git fsck wants .gitattributes to be a file`;
    if (Buffer.byteLength(s, "utf8") > MAX_SEGMENT_BYTES)
      return `has a segment longer than ${MAX_SEGMENT_BYTES} bytes, more than a file system takes`;
  }
  return undefined;
}

/** Whether `path` names a `.gitattributes` file, whose content fsck checks. */
export function isGitAttributesPath(path: string): boolean {
  return isDotGitAttributesSegment(path.slice(path.lastIndexOf("/") + 1));
}

/**
 * Why `git fsck` would refuse `content` as a `.gitattributes` file, or undefined: a line of
 * {@link GIT_ATTRIBUTES_MAX_LINE} bytes or more, or more than {@link GIT_ATTRIBUTES_MAX_BYTES} in
 * all (fsck.c, `fsck_blob`). Never throws.
 */
export function gitAttributesIssue(content: Uint8Array): string | undefined {
  if (content.length > GIT_ATTRIBUTES_MAX_BYTES)
    return `is larger than the ${GIT_ATTRIBUTES_MAX_BYTES} bytes git reads of a .gitattributes file`;
  let start = 0;
  // fsck reads the blob as a C string: it stops at the first NUL.
  const end = content.indexOf(0) < 0 ? content.length : content.indexOf(0);
  while (start < end) {
    let eol = content.indexOf(0x0a, start);
    if (eol < 0 || eol > end) eol = end;
    if (eol - start >= GIT_ATTRIBUTES_MAX_LINE)
      return `has a line of ${GIT_ATTRIBUTES_MAX_LINE} bytes or more, which git fsck refuses in a .gitattributes file`;
    start = eol + 1;
  }
  return undefined;
}

/**
 * Why a path relative to a kind's folder (a repository, a root) is unsafe, or undefined when it is
 * fine.
 *
 * Refused: NUL, absolute paths (also `C:`), backslashes, `..`, empty or `.` segments, a leading
 * `-`, and every path git itself refuses or `git fsck` reports ({@link unsafeGitPath}: `.git` and
 * `.gitmodules` in every NTFS and HFS+ spelling, a segment over 255 bytes): a folder a kind writes
 * under is often a git work tree. A static check of the text only; a kind checks the file system
 * (symlinks) again before writing. Never throws.
 */
export function unsafeRelativePath(p: string): string | undefined {
  if (p.includes("\0")) return "may not contain NUL";
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return "must be relative, not absolute";
  if (p.includes("\\")) return "may not contain a backslash";
  const parts = p.split("/");
  if (parts.some((s) => s === "..")) return "may not contain '..'";
  if (parts.some((s) => s === "" || s === ".")) return "may not contain empty or '.' segments";
  const git = unsafeGitPath(p);
  if (git) return git;
  if (p.startsWith("-")) return "may not start with '-'";
  return undefined;
}

/**
 * A path relative to a kind's folder, checked by its text with {@link unsafeRelativePath}; the kind
 * checks the file system again before writing.
 */
export const RelativePathSchema = z
  .string()
  .min(1)
  .max(4096)
  .superRefine((p, ctx) => {
    const why = unsafeRelativePath(p);
    if (why) ctx.addIssue({ code: "custom", message: why });
  });
