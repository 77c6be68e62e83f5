import { BranchNameSchema, CommitMessageSchema } from "@idem/git";
import { AliasSchema, RelativePathSchema } from "@idem/kit";
import { z } from "zod";

const GitFileSchema = z.union([
  z.strictObject({ path: RelativePathSchema, content: z.string() }),
  z.strictObject({ path: RelativePathSchema, delete: z.literal(true) }),
]);

/**
 * `git.commit`: one commit of whole files onto the repo's branch.
 *
 * Each file is given whole (`content`) or removed (`delete: true`). The commit carries the effect
 * key as its `Idem-Effect:` trailer, so a probe finds it on the branch after a crash.
 */
export const GitCommitSpecSchema = z.strictObject({
  kind: z.literal("git.commit"),
  repo: AliasSchema,
  branch: BranchNameSchema.optional(),
  /**
   * A branch of a remote repo (`url`) to start `branch` from when the remote does not have it yet:
   * the commit is the first of a new branch made at `from`'s tip (a branch per job, for a pull
   * request per job). Ignored once `branch` exists.
   */
  from: BranchNameSchema.optional(),
  message: CommitMessageSchema,
  files: z.array(GitFileSchema).min(1, "must change at least one file"),
});
/** A parsed `git.commit` effect. */
export type GitCommitSpec = z.infer<typeof GitCommitSpecSchema>;
