import { createHash, randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import type { ObjectFormat } from "./git-objects.js";

/** One object to pack: its id (as `objectId` gives it), type and body. */
export interface PackObject {
  oid: string;
  type: string;
  body: Uint8Array;
}

/** git's pack object types (a pack of whole objects: no deltas). */
const PACK_TYPES: Record<string, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/** An idx v2 offset at or past this goes to its table of 64-bit offsets. */
const LARGE_OFFSET = 0x80000000;

/** A pack and its index as bytes, and the name git gives them (`pack-<hash>`). */
export interface PackFiles {
  name: string;
  pack: Buffer;
  idx: Buffer;
}

/**
 * A version 2 pack of whole (undeltified) objects and its version 2 index, byte for byte as git
 * reads them (Documentation/gitformat-pack.txt): each object's type-and-size header and zlib
 * stream, the pack's hash at its end; the index's fan-out table, sorted ids, CRC-32s, offsets and
 * both hashes. Objects named twice are packed once. Pure.
 */
export function buildPack(format: ObjectFormat, objects: PackObject[]): PackFiles {
  const unique = [...new Map(objects.map((o) => [o.oid, o])).values()];
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.write("PACK", 0, "latin1");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(unique.length, 8);
  parts.push(header);
  let offset = header.length;
  const entries: { oid: Buffer; offset: number; crc: number }[] = [];
  for (const o of unique) {
    const type = PACK_TYPES[o.type];
    if (type === undefined) throw new Error(`cannot pack an object of type ${o.type}`);
    const entry = Buffer.concat([
      objectHeader(type, o.body.length),
      deflateSync(o.body, { level: 1 }),
    ]);
    entries.push({ oid: Buffer.from(o.oid, "hex"), offset, crc: crc32(entry) });
    parts.push(entry);
    offset += entry.length;
  }
  const body = Buffer.concat(parts);
  const packHash = createHash(format).update(body).digest();
  const pack = Buffer.concat([body, packHash]);
  entries.sort((a, b) => Buffer.compare(a.oid, b.oid));
  const idxBody = indexBytes(entries, packHash);
  const idx = Buffer.concat([idxBody, createHash(format).update(idxBody).digest()]);
  return { name: `pack-${packHash.toString("hex")}`, pack, idx };
}

/** A pack entry's header: type and size, 4 bits of size then 7 per byte, high bit: more. */
function objectHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let c = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(c);
  return Buffer.from(bytes);
}

/** An idx v2 without its own trailing hash: entries sorted by id. */
function indexBytes(
  entries: { oid: Buffer; offset: number; crc: number }[],
  packHash: Buffer,
): Buffer {
  const fanout = Buffer.alloc(256 * 4);
  const counts = new Array<number>(256).fill(0);
  for (const e of entries) counts[e.oid[0] as number] = (counts[e.oid[0] as number] as number) + 1;
  let total = 0;
  for (let i = 0; i < 256; i++) {
    total += counts[i] as number;
    fanout.writeUInt32BE(total, i * 4);
  }
  const crcs = Buffer.alloc(entries.length * 4);
  const offsets = Buffer.alloc(entries.length * 4);
  const large: Buffer[] = [];
  entries.forEach((e, i) => {
    crcs.writeUInt32BE(e.crc >>> 0, i * 4);
    if (e.offset < LARGE_OFFSET) offsets.writeUInt32BE(e.offset, i * 4);
    else {
      offsets.writeUInt32BE((LARGE_OFFSET | large.length) >>> 0, i * 4);
      const b = Buffer.alloc(8);
      b.writeBigUInt64BE(BigInt(e.offset));
      large.push(b);
    }
  });
  const magic = Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]);
  return Buffer.concat([
    magic,
    fanout,
    ...entries.map((e) => e.oid),
    crcs,
    offsets,
    ...large,
    packHash,
  ]);
}

/**
 * Writes `objects` as one pack into `objectsDir/pack` the way git's index-pack finishes one: both
 * files written under temporary names, then the pack renamed into place and its index after it (a
 * pack is only read through its index, so a crash between the two leaves an unread file, never a
 * half-visible pack). Not fsynced: the caller fsyncs the two paths it answers before any ref
 * points at what they hold. A pack of the same objects already there is replaced by the same bytes.
 * @throws the write's or rename's error (the temporary files removed).
 */
export function writePack(
  objectsDir: string,
  format: ObjectFormat,
  objects: PackObject[],
): { pack: string; idx: string } {
  const { name, pack, idx } = buildPack(format, objects);
  const dir = join(objectsDir, "pack");
  mkdirSync(dir, { recursive: true });
  const tag = randomBytes(6).toString("hex");
  const tmpPack = join(dir, `tmp_pack_idem_${tag}`);
  const tmpIdx = join(dir, `tmp_idx_idem_${tag}`);
  const files = { pack: join(dir, `${name}.pack`), idx: join(dir, `${name}.idx`) };
  try {
    writeWhole(tmpPack, pack);
    writeWhole(tmpIdx, idx);
    renameSync(tmpPack, files.pack);
    renameSync(tmpIdx, files.idx);
  } catch (e) {
    rmSync(tmpPack, { force: true });
    rmSync(tmpIdx, { force: true });
    throw e;
  }
  return files;
}

/** A new read-only file holding `data` (created exclusively, as git's temporary files are). */
function writeWhole(path: string, data: Buffer): void {
  const fd = openSync(path, "wx", 0o444);
  try {
    for (let at = 0; at < data.length; ) at += writeSync(fd, data, at, data.length - at);
  } finally {
    closeSync(fd);
  }
}
