// git's rules for the names the git kinds take from agents and the config: branch names, commit
// messages and the trailer that carries an effect's key.
import { z } from "zod";
import { isSafeBranchName } from "./branch-names.js";

export { isSafeBranchName };

/** The trailer line that carries an effect's key in a commit message (`Idem-Effect: <key>`). */
export const EFFECT_TRAILER = "Idem-Effect";

/** A branch name that `git check-ref-format` takes and that cannot be read as an option. */
export const BranchNameSchema = z
  .string()
  .min(1)
  .max(200)
  .refine(isSafeBranchName, "is not a safe branch name (git check-ref-format, no leading -)");

/** A commit message without an `Idem-Effect:` line of its own (idem adds the effect's). */
export const CommitMessageSchema = z
  .string()
  .min(1)
  .max(65_536)
  .refine(
    (m) => !new RegExp(`^\\s*${EFFECT_TRAILER}\\s*:`, "im").test(m),
    `may not contain an ${EFFECT_TRAILER}: line of its own`,
  );
