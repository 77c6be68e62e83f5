import { BranchNameSchema, CommitMessageSchema } from "@idem/git";
import { AliasSchema } from "@idem/kit";
import { z } from "zod";

/**
 * `git.patch`: a unified text diff (as `git diff` writes it), applied and committed.
 *
 * Committed with its `Idem-Effect:` trailer, as `git.commit`.
 */
export const GitPatchSpecSchema = z.strictObject({
  kind: z.literal("git.patch"),
  repo: AliasSchema,
  branch: BranchNameSchema.optional(),
  message: CommitMessageSchema,
  patch: z.string().min(1),
});
/** A parsed `git.patch` effect. */
export type GitPatchSpec = z.infer<typeof GitPatchSpecSchema>;
