/**
 * The apply half of the in-process `git apply --cached` (the parse half is patch-parse.ts): finds
 * each hunk where git would, and answers null whenever git's answer could differ.
 */
import type { BaseFile, Hunk, PlainResult, PlainSection } from "./patch-parse.js";
import { REGULAR_MODES } from "./patch-parse.js";

interface ImageLine {
  data: Buffer;
  patched: boolean;
}

type Match = "yes" | "no" | "unsure";

/** A hunk's preimage and where git requires it: at the file's start, at its end (or anywhere). */
interface Fragment {
  pre: Buffer[];
  matchBeginning: boolean;
  matchEnd: boolean;
}

/**
 * git's match_fragment without whitespace options. git compares a line hash and then the preimage
 * bytes at the position: that is line-by-line equality, except when the preimage's last line has
 * no newline and the file's line goes on past it, where git's answer depends on its hash: unsure.
 */
function matchAt(img: ImageLine[], lno: number, fragment: Fragment): Match {
  const { pre, matchBeginning, matchEnd } = fragment;
  if (pre.length + lno > img.length) return "no";
  if (matchEnd && pre.length + lno !== img.length) return "no";
  if (matchBeginning && lno !== 0) return "no";
  for (let k = 0; k < pre.length; k++) if ((img[lno + k] as ImageLine).patched) return "no";
  if (pre.length === 0) return "yes";
  for (let k = 0; k < pre.length - 1; k++) {
    if (!(img[lno + k] as ImageLine).data.equals(pre[k] as Buffer)) return "no";
  }
  const last = pre[pre.length - 1] as Buffer;
  const line = (img[lno + pre.length - 1] as ImageLine).data;
  if (line.equals(last)) return "yes";
  if (
    last[last.length - 1] !== 0x0a &&
    line.length > last.length &&
    line.subarray(0, last.length).equals(last)
  ) {
    return "unsure";
  }
  return "no";
}

/** git's find_pos: from `line`, then one line further, one line back, two further, and so on. */
function findPos(img: ImageLine[], fragment: Fragment, start: number): number | "unsure" {
  const { pre, matchBeginning, matchEnd } = fragment;
  if (pre.length > img.length) return -1;
  let line = start;
  if (matchBeginning) line = 0;
  else if (matchEnd) line = img.length - pre.length;
  if (line > img.length) line = img.length;
  let backwards = line;
  let forwards = line;
  let current = line;
  for (let i = 0; ; i++) {
    const m = matchAt(img, current, fragment);
    if (m === "yes") return current;
    if (m === "unsure") return "unsure";
    for (;;) {
      if (backwards === 0 && forwards === img.length) return -1;
      if (i & 1) {
        if (backwards === 0) {
          i++;
          continue;
        }
        backwards--;
        current = backwards;
      } else {
        if (forwards === img.length) {
          i++;
          continue;
        }
        forwards++;
        current = forwards;
      }
      break;
    }
  }
}

/** Splits file content into lines that keep their newline, as git's prepare_image does. */
function imageOf(content: Buffer): ImageLine[] {
  const out: ImageLine[] = [];
  let start = 0;
  while (start < content.length) {
    const nl = content.indexOf(0x0a, start);
    const end = nl < 0 ? content.length : nl + 1;
    out.push({ data: content.subarray(start, end), patched: false });
    start = end;
  }
  return out;
}

/**
 * Applies hunks to content as git's apply_fragments does. Null: a hunk does not apply (or git's
 * answer is not certain): ask git.
 */
export function applyHunks(content: Buffer, hunks: Hunk[]): Buffer | null {
  let img = imageOf(content);
  for (const h of hunks) {
    const fragment = {
      pre: h.pre,
      matchBeginning: h.oldPos === 0 || h.oldPos === 1,
      matchEnd: h.trailing === 0,
    };
    const at = findPos(img, fragment, h.newPos ? h.newPos - 1 : 0);
    if (at === "unsure" || at < 0) return null;
    // git's update_image: the preimage's lines out, the postimage's in, marked patched.
    const next = img.slice(0, at);
    for (const data of h.post) next.push({ data, patched: true });
    for (let k = at + h.pre.length; k < img.length; k++) next.push(img[k] as ImageLine);
    img = next;
  }
  return Buffer.concat(img.map((l) => l.data));
}

/**
 * The result of `git apply --cached` of a plain patch on a tree, or null when git must answer.
 * `base` tells what the tree holds at a path.
 */
export function applyPlainPatch(
  sections: PlainSection[],
  base: (path: string) => BaseFile,
): PlainResult[] | null {
  const out: PlainResult[] = [];
  for (const s of sections) {
    const b = base(s.path);
    if (b.kind === "other") return null;
    if (s.kind === "create") {
      if (b.kind !== "absent") return null;
      const content = applyHunks(Buffer.alloc(0), s.hunks);
      if (!content) return null;
      out.push({ path: s.path, content, mode: s.mode as string });
      continue;
    }
    if (b.kind !== "file" || !REGULAR_MODES.has(b.mode)) return null;
    const content = applyHunks(b.content, s.hunks);
    if (!content) return null;
    if (s.kind === "delete") {
      // git refuses a removal patch that leaves content.
      if (content.length !== 0) return null;
      out.push({ path: s.path, content: null, mode: b.mode });
    } else {
      // A modification keeps the mode the index has.
      out.push({ path: s.path, content, mode: b.mode });
    }
  }
  return out;
}
