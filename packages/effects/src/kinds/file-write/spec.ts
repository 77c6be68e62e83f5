import { AliasSchema, RelativePathSchema } from "@idem/kit";
import { z } from "zod";

/**
 * `file.write`: the whole content of one file under a configured root.
 *
 * utf8 or base64, written by rename. A later recorded write to the same path supersedes it: it is
 * then skipped, never rolled back.
 */
export const FileWriteSpecSchema = z.strictObject({
  kind: z.literal("file.write"),
  root: AliasSchema,
  path: RelativePathSchema,
  content: z.string(),
  encoding: z.enum(["utf8", "base64"]).optional(),
});
/** A parsed `file.write` effect. */
export type FileWriteSpec = z.infer<typeof FileWriteSpecSchema>;
