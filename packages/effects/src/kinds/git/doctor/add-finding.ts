import type { KindFinding } from "@idem/kit";

/** How a check of the git kinds reports what it finds. */
export type AddFinding = (
  severity: KindFinding["severity"],
  key: string,
  message: string,
  fix: string,
) => void;
