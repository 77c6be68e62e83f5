import { z } from "zod";

const MESSAGE = "must be a postgres:// or postgresql:// URL";

/**
 * `journal.url`: a PostgreSQL journal, `postgres://` or `postgresql://`. Zod's messages never
 * repeat the value, so a password in it stays out of every issue.
 */
export const JournalUrlSchema = z.string().regex(/^postgres(ql)?:\/\/[^\s]+$/, MESSAGE);

/**
 * The journal URL a config ends with: `IDEM_JOURNAL_URL` when set (the environment wins over the
 * file, as `NATS_URL` does), else `journal.url`. An invalid variable is an issue naming it, never
 * its value. Pure.
 */
export function journalUrlOf(
  fromFile: string | null,
  fromEnv: string | undefined,
): { url: string | null } | { issue: { path: string; message: string } } {
  if (!fromEnv) return { url: fromFile };
  const parsed = JournalUrlSchema.safeParse(fromEnv);
  return parsed.success
    ? { url: parsed.data }
    : { issue: { path: "IDEM_JOURNAL_URL", message: MESSAGE } };
}
