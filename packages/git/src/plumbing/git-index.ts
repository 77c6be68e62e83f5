import { createHash } from "node:crypto";
import type { ObjectFormat } from "./git-objects.js";

/**
 * The parts of git's index file (gitformat-index) idem reads and writes in process, so that keeping
 * a checked-out branch's index in step with an effect commit costs no git process. Only the plain
 * layout is understood; anything else (split index, sparse index, fsmonitor, unknown required
 * extensions, conflicts, skip-worktree or intent-to-add entries) is reported unsupported and the
 * caller falls back to git itself.
 */

/** One index entry (stage 0 only: conflicted indexes are unsupported). */
export interface IndexEntry {
  path: string;
  pathBytes: Buffer;
  /** ctime s, ctime ns, mtime s, mtime ns, dev, ino, mode, uid, gid, size (as git stores them). */
  stat: number[];
  oid: string;
  /** The 16-bit flags without the name length. */
  flags: number;
}

/** A cache-tree (TREE extension) node: `entryCount` -1 means invalid; then `oid` is null. */
export interface CacheTreeNode {
  name: string;
  entryCount: number;
  oid: string | null;
  children: CacheTreeNode[];
}

/** A parsed index file: its version, entries, cache tree and the extensions kept as they were. */
export interface GitIndex {
  version: number;
  entries: IndexEntry[];
  tree: CacheTreeNode | null;
  /** Optional extensions idem keeps as they are (resolve-undo). */
  kept: { sig: string; data: Buffer }[];
}

const ASSUME_VALID = 0x8000;
const EXTENDED = 0x4000;
const STAGE_MASK = 0x3000;
/** Optional extensions that describe things idem does not change. */
const KEEP = new Set(["REUC"]);
/** Optional extensions that are only a cache git rebuilds: dropped when idem rewrites the index. */
const DROP = new Set(["UNTR", "EOIE", "IEOT"]);

/** Why an index cannot be handled in process, or the parsed index. */
export type ParsedIndex = { ok: true; index: GitIndex } | { ok: false; reason: string };

function hashLength(format: ObjectFormat): number {
  return format === "sha1" ? 20 : 32;
}

function decodeVarint(buf: Buffer, pos: number): [number, number] {
  let c = buf[pos++] as number;
  let val = c & 127;
  while (c & 128) {
    val += 1;
    c = buf[pos++] as number;
    val = val * 128 + (c & 127);
  }
  return [val, pos];
}

function encodeVarint(value: number): Buffer {
  const out = [value & 127];
  let v = Math.floor(value / 128);
  while (v > 0) {
    v -= 1;
    out.unshift(128 | (v & 127));
    v = Math.floor(v / 128);
  }
  return Buffer.from(out);
}

/** Parses an index file. Verifies its checksum; refuses what idem does not handle. */
export function parseIndex(buf: Buffer, format: ObjectFormat): ParsedIndex {
  const hl = hashLength(format);
  if (buf.length < 12 + hl || buf.toString("latin1", 0, 4) !== "DIRC")
    return { ok: false, reason: "not an index file" };
  const body = buf.subarray(0, buf.length - hl);
  const trailer = buf.subarray(buf.length - hl);
  if (trailer.every((b) => b === 0)) return { ok: false, reason: "index.skipHash" };
  if (!createHash(format).update(body).digest().equals(trailer))
    return { ok: false, reason: "index checksum mismatch" };
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return { ok: false, reason: `index version ${version}` };
  const count = buf.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let pos = 12;
  let prev: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = pos;
    const stat: number[] = [];
    for (let k = 0; k < 10; k++) stat.push(buf.readUInt32BE(pos + k * 4));
    pos += 40;
    const oid = buf.toString("hex", pos, pos + hl);
    pos += hl;
    const flags = buf.readUInt16BE(pos);
    pos += 2;
    if (flags & EXTENDED) return { ok: false, reason: "extended index flags" };
    if (flags & STAGE_MASK) return { ok: false, reason: "unmerged entries" };
    if (flags & ASSUME_VALID) return { ok: false, reason: "assume-unchanged entries" };
    let pathBytes: Buffer;
    if (version === 4) {
      const [strip, p2] = decodeVarint(buf, pos);
      const nul = buf.indexOf(0, p2);
      if (nul < 0 || strip > prev.length) return { ok: false, reason: "malformed v4 path" };
      pathBytes = Buffer.concat([prev.subarray(0, prev.length - strip), buf.subarray(p2, nul)]);
      pos = nul + 1;
    } else {
      const nul = buf.indexOf(0, pos);
      if (nul < 0) return { ok: false, reason: "malformed path" };
      pathBytes = Buffer.from(buf.subarray(pos, nul));
      pos = start + ((40 + hl + 2 + pathBytes.length + 8) & ~7);
    }
    prev = pathBytes;
    entries.push({
      path: pathBytes.toString("utf8"),
      pathBytes,
      stat,
      oid,
      flags: flags & 0xf000,
    });
  }
  let tree: CacheTreeNode | null = null;
  const kept: { sig: string; data: Buffer }[] = [];
  while (pos + 8 <= body.length) {
    const sig = buf.toString("latin1", pos, pos + 4);
    const size = buf.readUInt32BE(pos + 4);
    const data = buf.subarray(pos + 8, pos + 8 + size);
    pos += 8 + size;
    if (sig === "TREE") {
      const t = parseCacheTree(data, hl);
      if (!t) return { ok: false, reason: "malformed cache tree" };
      tree = t;
    } else if (KEEP.has(sig)) kept.push({ sig, data: Buffer.from(data) });
    else if (DROP.has(sig)) continue;
    else return { ok: false, reason: `index extension ${JSON.stringify(sig)}` };
  }
  if (pos !== body.length) return { ok: false, reason: "malformed extensions" };
  return { ok: true, index: { version, entries, tree, kept } };
}

function parseCacheTree(data: Buffer, hl: number): CacheTreeNode | null {
  let pos = 0;
  const readNode = (): CacheTreeNode | null => {
    const nul = data.indexOf(0, pos);
    if (nul < 0) return null;
    const name = data.toString("utf8", pos, nul);
    const nl = data.indexOf(10, nul);
    if (nl < 0) return null;
    const m = /^(-?\d+) (\d+)$/.exec(data.toString("latin1", nul + 1, nl));
    if (!m) return null;
    const entryCount = Number(m[1]);
    const subtrees = Number(m[2]);
    pos = nl + 1;
    let oid: string | null = null;
    if (entryCount >= 0) {
      if (pos + hl > data.length) return null;
      oid = data.toString("hex", pos, pos + hl);
      pos += hl;
    }
    const children: CacheTreeNode[] = [];
    for (let i = 0; i < subtrees; i++) {
      const c = readNode();
      if (!c) return null;
      children.push(c);
    }
    return { name, entryCount, oid, children };
  };
  const root = readNode();
  return root && pos === data.length ? root : null;
}

function serializeCacheTree(node: CacheTreeNode, out: Buffer[]): void {
  out.push(
    Buffer.from(`${node.name}\0${node.entryCount} ${node.children.length}\n`, "utf8"),
    node.entryCount >= 0 && node.oid ? Buffer.from(node.oid, "hex") : Buffer.alloc(0),
  );
  for (const c of node.children) serializeCacheTree(c, out);
}

/** Serializes an index in its own version, with a fresh checksum. */
export function serializeIndex(index: GitIndex, format: ObjectFormat): Buffer {
  const hl = hashLength(format);
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.write("DIRC", 0, "latin1");
  header.writeUInt32BE(index.version, 4);
  header.writeUInt32BE(index.entries.length, 8);
  parts.push(header);
  let prev: Buffer = Buffer.alloc(0);
  for (const e of index.entries) {
    const fixed = Buffer.alloc(40 + hl + 2);
    for (let k = 0; k < 10; k++) fixed.writeUInt32BE((e.stat[k] ?? 0) >>> 0, k * 4);
    Buffer.from(e.oid, "hex").copy(fixed, 40);
    fixed.writeUInt16BE((e.flags & 0xf000) | Math.min(e.pathBytes.length, 0xfff), 40 + hl);
    parts.push(fixed);
    if (index.version === 4) {
      let common = 0;
      const max = Math.min(prev.length, e.pathBytes.length);
      while (common < max && prev[common] === e.pathBytes[common]) common++;
      parts.push(encodeVarint(prev.length - common), e.pathBytes.subarray(common), Buffer.alloc(1));
      prev = e.pathBytes;
    } else {
      const len = (40 + hl + 2 + e.pathBytes.length + 8) & ~7;
      parts.push(e.pathBytes, Buffer.alloc(len - (40 + hl + 2) - e.pathBytes.length));
    }
  }
  if (index.tree) {
    const t: Buffer[] = [];
    serializeCacheTree(index.tree, t);
    const data = Buffer.concat(t);
    const h = Buffer.alloc(8);
    h.write("TREE", 0, "latin1");
    h.writeUInt32BE(data.length, 4);
    parts.push(h, data);
  }
  for (const x of index.kept) {
    const h = Buffer.alloc(8);
    h.write(x.sig, 0, "latin1");
    h.writeUInt32BE(x.data.length, 4);
    parts.push(h, x.data);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash(format).update(body).digest()]);
}

/** Index order: path bytes (every entry is stage 0). */
export function compareEntryPaths(a: Buffer, b: Buffer): number {
  return Buffer.compare(a, b);
}

/** The position of `path` in the sorted entries, or where it would go (as `-(pos + 1)`). */
export function findEntry(entries: IndexEntry[], path: Buffer): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = compareEntryPaths((entries[mid] as IndexEntry).pathBytes, path);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -(lo + 1);
}

/** How many entries lie under the folder `dir` ("" for the root). */
export function countUnder(entries: IndexEntry[], dir: string): number {
  if (dir === "") return entries.length;
  const lo = findEntry(entries, Buffer.from(`${dir}/`, "utf8"));
  const hi = findEntry(entries, Buffer.from(`${dir}0`, "utf8")); // '0' sorts right after '/'
  return (hi < 0 ? -hi - 1 : hi) - (lo < 0 ? -lo - 1 : lo);
}

/**
 * Brings a valid cache tree forward after the entries under the folders of `dirs` changed:
 * `dirs` maps every folder on the way to a changed path ("" is the root) to its tree in the new
 * commit, or null where the folder no longer exists. Untouched subtrees stay as they were (still
 * valid: nothing under them changed).
 */
export function updateCacheTree(
  root: CacheTreeNode,
  dirs: Map<string, string | null>,
  entries: IndexEntry[],
): void {
  const sorted = [...dirs.keys()].sort(
    (a, b) => (a === "" ? 0 : a.split("/").length) - (b === "" ? 0 : b.split("/").length),
  );
  for (const dir of sorted) {
    const oid = dirs.get(dir) ?? null;
    if (dir === "") {
      root.oid = oid;
      root.entryCount = oid === null ? 0 : entries.length;
      continue;
    }
    const parts = dir.split("/");
    let parent: CacheTreeNode | undefined = root;
    for (const p of parts.slice(0, -1)) parent = parent?.children.find((c) => c.name === p);
    if (!parent) continue; // an ancestor vanished: so did this folder
    const name = parts[parts.length - 1] as string;
    const i = parent.children.findIndex((c) => c.name === name);
    if (oid === null) {
      if (i >= 0) parent.children.splice(i, 1);
      continue;
    }
    const node =
      i >= 0
        ? (parent.children[i] as CacheTreeNode)
        : { name, entryCount: 0, oid: null, children: [] };
    node.oid = oid;
    node.entryCount = countUnder(entries, dir);
    if (i < 0) parent.children.push(node);
  }
}

/** True when every node of the cache tree is valid (what a `git write-tree` leaves). */
export function cacheTreeValid(node: CacheTreeNode): boolean {
  return node.entryCount >= 0 && node.oid !== null && node.children.every(cacheTreeValid);
}
