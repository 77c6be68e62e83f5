import { type Config, checkConfigInvariants, IdemError } from "@idem/schema";

/**
 * Refuses a config that breaks invariant 7 of docs/concepts.md (the checks of
 * `checkConfigInvariants`), before a process connects to anything. Pure.
 * @throws INVARIANT_VIOLATION (exit 3) listing every violation with its fix, the violations in
 * `details.violations`.
 */
export function assertConfigInvariants(config: Config): void {
  const violations = checkConfigInvariants(config);
  if (violations.length > 0) {
    throw new IdemError(
      "INVARIANT_VIOLATION",
      violations.map((v) => `${v.key}: ${v.message} (fix: ${v.fix})`).join("\n"),
      { details: { violations } },
    );
  }
}
