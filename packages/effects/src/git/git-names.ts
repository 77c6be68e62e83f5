// git's rules for the names the git kinds take from agents and the config: branch names, commit
// messages and the trailer that carries an effect's key.
import { z } from "zod";

/** The trailer line that carries an effect's key in a commit message (`Idem-Effect: <key>`). */
export const EFFECT_TRAILER = "Idem-Effect";

/**
 * Whether a branch name is safe for git and for idem.
 *
 * A static approximation of `git check-ref-format --branch`, plus idem's own rule that a branch may
 * not look like an option (`-x`). The git kinds also ask git itself before writing. Never throws.
 */
export function isSafeBranchName(b: string): boolean {
  if (b.length === 0 || b.length > 200) return false;
  if (
    b.startsWith("-") ||
    b.startsWith("/") ||
    b.endsWith("/") ||
    b.endsWith(".") ||
    b.endsWith(".lock")
  )
    return false;
  if (b === "@" || b === "HEAD") return false;
  if (/\.\.|@\{|\/\/|[\x00-\x20\x7f~^:?*[\\]/.test(b)) return false;
  return b
    .split("/")
    .every((part) => part.length > 0 && !part.startsWith(".") && !part.endsWith(".lock"));
}

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
