/** A violation of the architecture test, named by its rule and its file(s). */
export interface KnownViolation {
  rule: string;
  from: string;
  /** The imported file, or the cycle as "a -> b -> a". */
  to?: string;
  lines?: number;
}

/**
 * The violations found while the refactor of issue 17 is in flight, tolerated so the suite stays
 * green (last measured 2026-11-25 05:00 UTC). Nothing may be added here: fix the import or split
 * the file instead. The lead empties this list when the refactor lands; the test logs the entries
 * that are already fixed.
 */
export const KNOWN_DURING_REFACTOR: readonly KnownViolation[] = [
  // source files over 400 lines
  { rule: "max-400-lines", from: "packages/journal/src/store/sqlite/connection.ts" },
];
