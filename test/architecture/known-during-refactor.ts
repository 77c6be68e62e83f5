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
 * green (last measured 2026-11-25 04:47 UTC). Nothing may be added here: fix the import or split
 * the file instead. The lead empties this list when the refactor lands; the test logs the entries
 * that are already fixed.
 */
export const KNOWN_DURING_REFACTOR: readonly KnownViolation[] = [
  // the CLI importing the executor and interpreter apps
  {
    rule: "no-app-imports-another-app",
    from: "apps/cli/src/commands/executor.ts",
    to: "apps/executor/src/index.ts",
  },
  {
    rule: "no-app-imports-another-app",
    from: "apps/cli/src/commands/interpreter.ts",
    to: "apps/interpreter/src/index.ts",
  },
  {
    rule: "no-app-imports-another-app",
    from: "apps/cli/src/commands/replay.ts",
    to: "apps/interpreter/src/index.ts",
  },
  // source files over 400 lines
  { rule: "max-400-lines", from: "packages/effects/src/git/patch/patch-apply.ts" },
  { rule: "max-400-lines", from: "packages/journal/src/store/sqlite/connection.ts" },
];
