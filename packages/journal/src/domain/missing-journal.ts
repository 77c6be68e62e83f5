import { IdemError } from "@idem/schema";

/** The runbook entry a refusal of a missing journal names. */
export const LOST_JOURNAL_ENTRY = 'docs/runbook.md, "A lost journal"';

/**
 * The refusal of a journal that is not there, by an open that may not create one (every command
 * but `idem init`): a journal that disappeared is never made anew, empty, under its name.
 */
export const missingJournal = (where: string, what = "no journal at"): IdemError =>
  new IdemError(
    "INTEGRITY",
    `${what} ${where}, and nothing was created: only idem init creates a journal. A new workspace: idem init --journal (the config is kept). A journal that was there: see ${LOST_JOURNAL_ENTRY}`,
    { details: { path: where, reason: "missing" } },
  );
