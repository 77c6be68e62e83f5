import { IdemError } from "@idem/schema";
import type { IndexEntry } from "../plumbing/git-index.js";

/**
 * The first path whose entry `git apply` changed although the patch reader did not list it
 * (`allowed`), or undefined when every change is among the listed paths. Both lists are index
 * entries in git's order (the index before and after the apply).
 *
 * idem builds the commit's tree from the listed paths only, so a path git touched and the reader
 * missed would be left out of the commit: a rename header the reader did not know once deleted a
 * file without creating its new name (issue 31). Pure; O(entries).
 */
export function changedOutside(
  before: readonly IndexEntry[],
  after: readonly IndexEntry[],
  allowed: ReadonlySet<string>,
): string | undefined {
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < before.length && allowed.has((before[i] as IndexEntry).path)) i++;
    while (j < after.length && allowed.has((after[j] as IndexEntry).path)) j++;
    const a = before[i];
    const b = after[j];
    if (a === undefined || b === undefined) return (a ?? b)?.path;
    if (a.path !== b.path) return Buffer.compare(a.pathBytes, b.pathBytes) < 0 ? a.path : b.path;
    if (a.oid !== b.oid || a.stat[6] !== b.stat[6]) return a.path;
    i++;
    j++;
  }
}

/**
 * The refusal of a patch that git applies to a path the reader did not see: a validation error
 * naming the field, so the run ends clearly and nothing is committed.
 */
export function strayPathError(path: string): IdemError {
  return new IdemError(
    "INVALID_INPUT",
    `patch: git apply changes "${path}", which idem's reading of the patch's headers does not name; nothing was committed`,
    { details: { field: "patch", path } },
  );
}
