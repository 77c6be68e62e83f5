import { createHash, type Hash } from "node:crypto";

/**
 * The content hash of a table: sha256 over the canonical JSON of every row (an array of its
 * values in the copy's column order, one line each) in primary-key order, with the row count.
 * Both sides hand it the same JS values (integers as numbers, text as strings, null), so the same
 * rows give the same hash whichever database they were read from; JSON columns are text on both
 * stores and are compared byte for byte.
 */
export class TableDigest {
  private readonly hash: Hash = createHash("sha256");
  rows = 0;

  add(row: readonly unknown[]): void {
    this.hash.update(`${canonicalRow(row)}\n`);
    this.rows += 1;
  }

  /** The hex digest; call once. */
  finish(): { rows: number; sha256: string } {
    return { rows: this.rows, sha256: this.hash.digest("hex") };
  }
}

/** A row as the copy compares it: JSON of its values in column order. */
export const canonicalRow = (row: readonly unknown[]): string => JSON.stringify(row);
