import { createHash, randomBytes } from "node:crypto";
import { promises as fs, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync, inflateSync } from "node:zlib";

/** The hash of a repository's object format. */
export type ObjectFormat = "sha1" | "sha256";

/** One entry of a tree object. */
export interface TreeEntry {
  mode: string;
  name: string;
  oid: string;
}

/** A folder (tree entry modes are as git writes them, without a leading zero). */
export const TREE_MODE = "40000";
/** A regular file. */
export const FILE_MODE = "100644";
/** An executable file. */
export const EXEC_MODE = "100755";
/** A symbolic link. */
export const LINK_MODE = "120000";
/** A submodule (gitlink). */
export const GITLINK_MODE = "160000";

/** The oid git gives an object of `type` with `body`. */
export function objectId(format: ObjectFormat, type: string, body: Uint8Array): string {
  return createHash(format).update(`${type} ${body.length}\0`).update(body).digest("hex");
}

/** A loose object to write: where (the objects folder and its format), what, and how durably. */
export interface LooseObject {
  objectsDir: string;
  format: ObjectFormat;
  /** `blob`, `tree` or `commit`. */
  type: string;
  body: Uint8Array;
  /** fsync the object and its folder before answering. */
  durable: boolean;
}

/**
 * Writes a loose object the way git does (deflated `type size\0body` in objects/xx/rest, through a
 * temporary file, so a crash never leaves a torn object), fsynced when `durable`.
 * Idempotent: an object that exists whole is left alone. One that exists but is not whole (a power
 * loss after writes that were not fsynced leaves files empty or torn under their names) is written
 * again: a new commit never builds on an object git cannot read. Returns the oid.
 */
export async function writeLooseObject(object: LooseObject): Promise<string> {
  const { objectsDir, format, type, body, durable } = object;
  const oid = objectId(format, type, body);
  const dir = join(objectsDir, oid.slice(0, 2));
  const file = join(dir, oid.slice(2));
  if (!durable && body.length <= SYNC_WRITE_LIMIT) {
    writeLooseObjectNow(dir, file, type, body);
    return oid;
  }
  if (isWhole(file, type, body)) return oid;
  await fs.mkdir(dir, { recursive: true });
  const tmp = join(dir, `tmp_obj_idem_${randomBytes(6).toString("hex")}`);
  const data = deflateSync(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]), {
    level: 1,
  });
  const fh = await fs.open(tmp, "wx", 0o444);
  try {
    await fh.writeFile(data);
    if (durable) await fh.datasync();
  } finally {
    await fh.close();
  }
  // Renamed into place as the small writes are (writeLooseObjectNow).
  await fs.rename(tmp, file);
  return oid;
}

/**
 * Small non-durable writes use the synchronous calls: a few tens of microseconds each, where an
 * async call waits its turn on libuv's thread pool (most of an effect's time on a busy machine).
 */
export const SYNC_WRITE_LIMIT = 1 << 20;

/**
 * Whether the loose object at `file` holds exactly `type size\0body`: absent, empty, torn or other
 * bytes are not whole. Reads it only when it exists (a repeat of an object already written).
 */
function isWhole(file: string, type: string, body: Uint8Array): boolean {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return false;
  }
  try {
    const raw = inflateSync(data);
    const header = Buffer.from(`${type} ${body.length}\0`);
    return (
      raw.length === header.length + body.length &&
      raw.subarray(0, header.length).equals(header) &&
      raw.subarray(header.length).equals(body)
    );
  } catch {
    return false;
  }
}

function writeLooseObjectNow(dir: string, file: string, type: string, body: Uint8Array): void {
  if (isWhole(file, type, body)) return;
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `tmp_obj_idem_${randomBytes(6).toString("hex")}`);
  const data = deflateSync(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]), {
    level: 1,
  });
  writeFileSync(tmp, data, { flag: "wx", mode: 0o444 });
  // Renamed into place, as git does with core.createObject=rename: one metadata change where a
  // hard link and an unlink make two (an effect writes three objects). An object another writer
  // put there meanwhile has the same bytes.
  renameSync(tmp, file);
}

/** Parses a raw tree object. */
export function parseTree(content: Buffer, format: ObjectFormat): TreeEntry[] {
  const hashLen = format === "sha1" ? 20 : 32;
  const out: TreeEntry[] = [];
  let i = 0;
  while (i < content.length) {
    const sp = content.indexOf(32, i);
    const nul = content.indexOf(0, sp);
    const mode = content.subarray(i, sp).toString("latin1");
    const name = content.subarray(sp + 1, nul).toString("utf8");
    const oid = content.subarray(nul + 1, nul + 1 + hashLen).toString("hex");
    out.push({ mode, name, oid });
    i = nul + 1 + hashLen;
  }
  return out;
}

/** Tree entries in git's order (a directory sorts as if its name ended with "/"). Pure. */
export function sortTree(entries: TreeEntry[]): TreeEntry[] {
  // Each entry's sort key made once (a tree of an agent's repo can hold thousands of entries).
  const keyed = entries.map((e) => ({
    e,
    k: Buffer.from(e.mode === TREE_MODE ? `${e.name}/` : e.name, "utf8"),
  }));
  keyed.sort((a, b) => Buffer.compare(a.k, b.k));
  return keyed.map((x) => x.e);
}

/** Serializes tree entries already in git's order (`sortTree`). Pure. */
export function serializeSortedTree(sorted: TreeEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of sorted) {
    parts.push(Buffer.from(`${e.mode} ${e.name}\0`, "utf8"), Buffer.from(e.oid, "hex"));
  }
  return Buffer.concat(parts);
}

/** Serializes tree entries in git's order. Pure. */
export function serializeTree(entries: TreeEntry[]): Buffer {
  return serializeSortedTree(sortTree(entries));
}

/** The parts of a commit object idem reads. */
export interface CommitInfo {
  tree: string;
  parents: string[];
  message: string;
}

/** Reads a commit object's tree, parents and message. Pure. */
export function parseCommit(content: Buffer): CommitInfo {
  const text = content.toString("utf8");
  const end = text.indexOf("\n\n");
  const head = end < 0 ? text : text.slice(0, end);
  const parents: string[] = [];
  let tree = "";
  for (const line of head.split("\n")) {
    if (line.startsWith("tree ")) tree = line.slice(5);
    else if (line.startsWith("parent ")) parents.push(line.slice(7));
  }
  return { tree, parents, message: end < 0 ? "" : text.slice(end + 2) };
}

/** An author or committer line: name, email and time. */
export interface Signature {
  name: string;
  email: string;
  /** Epoch milliseconds. */
  at: number;
}

/** A commit object body: tree, parents, author and committer at `at` (UTC), then the message. */
export function serializeCommit(
  tree: string,
  parents: string[],
  who: Signature,
  message: string,
): Buffer {
  const sig = `${who.name} <${who.email}> ${Math.floor(who.at / 1000)} +0000`;
  const lines = [
    `tree ${tree}`,
    ...parents.map((p) => `parent ${p}`),
    `author ${sig}`,
    `committer ${sig}`,
  ];
  return Buffer.from(`${lines.join("\n")}\n\n${message}`, "utf8");
}
