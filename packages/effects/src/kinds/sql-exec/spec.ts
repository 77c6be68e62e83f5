import { AliasSchema, JsonValueSchema } from "@idem/kit";
import { z } from "zod";

/**
 * `sql.exec`: statements the config defines, run in one transaction at a configured SQL target
 * with idem's key row (docs/kinds/sql.md). The agent names each statement and gives its
 * parameters by name; it never sends SQL.
 */
export const SqlExecSpecSchema = z.strictObject({
  kind: z.literal("sql.exec"),
  /** A `sql.targets` alias. */
  target: AliasSchema,
  /** Run in this order, all or none. */
  statements: z
    .array(
      z.strictObject({
        /** A statement of the target's `statements`. */
        name: z.string().min(1).max(64),
        /** Every parameter the statement declares, by name; null only where it is nullable. */
        params: z.record(z.string().min(1).max(64), JsonValueSchema).optional(),
      }),
    )
    .min(1)
    .max(100),
});
/** A parsed SqlExecSpecSchema. */
export type SqlExecSpec = z.infer<typeof SqlExecSpecSchema>;
