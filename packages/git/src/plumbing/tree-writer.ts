import { refuse } from "../git-checks.js";
import { GITLINK_MODE, TREE_MODE, type TreeEntry } from "./git-objects.js";
import type { ObjectWriter } from "./repo-objects.js";

/** A file change: new bytes, an object already in the repo (with its mode), or null to delete. */
export type FileChange = {
  parts: string[];
  content: Buffer | null | { oid: string; mode: string };
};

/**
 * Writes the new tree bottom-up from `tree` with `changes` applied, straight into the object
 * database (no index, no working tree). Refuses paths through a file, symlink or submodule of the
 * tree, and replacing a directory by a file. Returns null for an empty tree.
 * @throws IdemError SANDBOX_VIOLATION for such a path.
 */
export async function rewriteTree(
  objects: ObjectWriter,
  tree: string | null,
  changes: FileChange[],
): Promise<string | null> {
  const entries: TreeEntry[] = tree ? [...(await objects.tree(tree))] : [];
  const groups = new Map<string, FileChange[]>();
  for (const c of changes) {
    const name = c.parts[0] as string;
    const g = groups.get(name);
    if (g) g.push(c);
    else groups.set(name, [c]);
  }
  for (const [name, group] of groups) {
    const idx = entries.findIndex((e) => e.name === name);
    const existing = idx >= 0 ? entries[idx] : undefined;
    const direct = group.filter((c) => c.parts.length === 1);
    const deeper = group.filter((c) => c.parts.length > 1);
    if (direct.length > 0 && deeper.length > 0)
      refuse("files", `"${name}" is both a file and a directory`);
    let next: TreeEntry | undefined;
    if (direct.length > 0) {
      const c = direct[0] as FileChange;
      if (existing?.mode === TREE_MODE) refuse("files", `"${name}" is a directory`);
      if (existing?.mode === GITLINK_MODE) refuse("files", `"${name}" is a submodule`);
      const content = c.content;
      if (content !== null && "oid" in content) {
        next = { mode: content.mode, name, oid: content.oid };
      } else if (content !== null) {
        const oid = await objects.writeObject("blob", content);
        next = { mode: existing?.mode === "100755" ? "100755" : "100644", name, oid };
      }
    } else {
      if (existing && existing.mode !== TREE_MODE) {
        refuse(
          "files",
          `path goes through "${name}", which is a ${existing.mode === "120000" ? "symlink" : "file"}`,
        );
      }
      const sub = await rewriteTree(
        objects,
        existing?.oid ?? null,
        deeper.map((c) => ({ parts: c.parts.slice(1), content: c.content })),
      );
      if (sub !== null) next = { mode: TREE_MODE, name, oid: sub };
    }
    if (idx >= 0) entries.splice(idx, 1);
    if (next) entries.push(next);
  }
  if (entries.length === 0) return null;
  return objects.writeTree(entries);
}

/** `rewriteTree`, with the empty tree written when nothing is left: a commit always has a tree. */
export async function treeWith(
  objects: ObjectWriter,
  tree: string | null,
  changes: FileChange[],
): Promise<string> {
  return (
    (await rewriteTree(objects, tree, changes)) ??
    (await objects.writeObject("tree", Buffer.alloc(0)))
  );
}
