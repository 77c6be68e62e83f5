/** A violation of the architecture test, named by its rule and its file(s). */
export interface KnownViolation {
  rule: string;
  from: string;
  /** The imported file, or the cycle as "a -> b -> a". */
  to?: string;
  lines?: number;
}

/**
 * Violations tolerated while a refactor is in flight, so the suite stays green; each entry names
 * its rule and file(s). Empty since 2026-11-25 05:10 UTC, when the refactor of issue 17 had fixed
 * every violation it listed. Nothing may be added here: fix the import or split the file instead.
 * The test logs entries that are already fixed, so the list only shrinks.
 */
export const KNOWN_DURING_REFACTOR: readonly KnownViolation[] = [];
