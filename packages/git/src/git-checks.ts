import { gitAttributesIssue, isGitAttributesPath, unsafeRelativePath } from "@idem/kit";
import { IdemError } from "@idem/schema";
import { EFFECT_TRAILER } from "./git-names.js";
import type { RepoObjects } from "./plumbing/repo-objects.js";

// The checks of the text idem hands git (paths, messages, ref names): a refusal is
// SANDBOX_VIOLATION naming its field, before anything is written.

/** Throws SANDBOX_VIOLATION with the field it is about. */
export function refuse(field: string, why: string): never {
  throw new IdemError("SANDBOX_VIOLATION", `${field} ${why}`, { details: { field } });
}

/** Re-checks a relative path at the target (the stored spec may predate today's schema). */
export function checkRelativePath(field: string, p: string): void {
  const why = unsafeRelativePath(p);
  if (why) refuse(field, `"${p}" ${why}`);
  if (Buffer.byteLength(p) > 4096) refuse(field, "is too long");
  if (/[\n\r]/.test(p)) refuse(field, "may not contain a line break");
}

const TRAILER_LINE = new RegExp(`^\\s*${EFFECT_TRAILER}\\s*:`, "im");

/**
 * A `.gitattributes` file's content as git fsck reads it (no line of 2048 bytes or more): a commit
 * that breaks fsck cannot be pushed to a server that checks, nor cloned with transfer.fsckObjects.
 * @throws IdemError SANDBOX_VIOLATION naming `field`
 */
export function checkGitFileContent(field: string, path: string, content: Uint8Array): void {
  if (!isGitAttributesPath(path)) return;
  const why = gitAttributesIssue(content);
  if (why) refuse(field, why);
}

/** A commit message that carries its own trailer could forge another effect's presence. */
export function checkMessage(message: string): void {
  if (message.trim().length === 0) refuse("message", "is empty");
  if (message.includes("\0")) refuse("message", "may not contain NUL");
  if (TRAILER_LINE.test(message))
    refuse("message", `may not contain an ${EFFECT_TRAILER}: line of its own`);
  if (Buffer.byteLength(message) > 65_536) refuse("message", "is longer than 64 KiB");
}

/** The message idem commits: the agent's text, a blank line, then the trailer as the last paragraph. */
export function messageWithTrailer(message: string, key: string): string {
  return `${message.replace(/\s+$/, "")}\n\n${EFFECT_TRAILER}: ${key}\n`;
}

/** Reads the effect keys from a commit message's `Idem-Effect:` lines. */
export function trailerKeys(message: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`^${EFFECT_TRAILER}: (\\S+)\\s*$`, "gm");
  for (const m of message.matchAll(re)) out.push(m[1] as string);
  return out;
}

/** Encodes an effect key or branch into one valid ref name component. */
export function refComponent(s: string): string {
  return [...Buffer.from(s, "utf8")]
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9_-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}

/**
 * Refuses paths that pass through a symlink, file or submodule of `tree` (git would write beyond a
 * symbolic link in a working tree).
 * @throws IdemError SANDBOX_VIOLATION
 */
export async function checkTreePaths(
  objects: Pick<RepoObjects, "entryAt">,
  tree: string | null,
  paths: string[],
): Promise<void> {
  for (const p of paths) {
    const parts = p.split("/");
    for (let i = 1; i < parts.length; i++) {
      const e = await objects.entryAt(tree, parts.slice(0, i).join("/"));
      if (!e) break;
      if (e.mode !== "40000") {
        refuse(
          "path",
          `"${p}" passes through ${parts.slice(0, i).join("/")}, which is a ${e.mode === "120000" ? "symlink" : e.mode === "160000" ? "submodule" : "file"}`,
        );
      }
    }
  }
}
