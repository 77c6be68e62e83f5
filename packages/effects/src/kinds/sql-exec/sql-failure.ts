import { fail, IdemError } from "@idem/kit";
import type { SqlDriver } from "./sql-driver.js";

/** Where an error happened: the target, and the statement (its index in the spec and its name). */
export interface SqlWhere {
  alias: string;
  what: string;
  statement?: { index: number; name: string };
}

/**
 * A target's message as idem shows it: at most 300 characters, control characters replaced
 * (every byte from a target is hostile). Never holds the connection URL: drivers do not put it in
 * their messages, and sql.exec never does.
 */
export function targetMessage(e: unknown): string {
  const raw = e instanceof Error ? e.message : String(e);
  const clean = raw.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  return clean.length > 300 ? `${clean.slice(0, 300)}…` : clean;
}

/**
 * Maps a driver's error to idem's codes (docs/kinds/sql.md, "Failures"):
 * transient (and a lost connection, a COMMIT whose answer was lost among them: the probe tells)
 * UNAVAILABLE; a value the column cannot take INVALID_INPUT naming `statements.<i>.params`; a
 * constraint of the target's data TARGET_CONFLICT; a statement or setting that cannot work
 * INVALID_CONFIG naming `sql.targets.<alias>[.statements.<name>]`. Never an unknown outcome: the
 * key row commits with the statements, so a probe always knows.
 */
export function sqlFailure(driver: SqlDriver, e: unknown, where: SqlWhere): IdemError {
  if (e instanceof IdemError) return e;
  const kind = driver.classify(e);
  const code = driver.codeOf(e);
  const said = `${targetMessage(e)}${code ? ` (${code})` : ""}`;
  const s = where.statement;
  const subject = `sql target ${where.alias}: ${where.what}${s ? ` (statements.${s.index}: ${s.name})` : ""}`;
  switch (kind) {
    case "transient":
      return fail.transient(`${subject} failed: ${said}`, { cause: e });
    case "data":
      if (s)
        return fail.invalid(
          `statements.${s.index}.params`,
          `were refused by ${where.alias} for ${s.name}: ${said}`,
        );
      break;
    case "unique":
    case "conflict":
      return fail.conflict(`${subject} was refused by the target's data: ${said}`, e);
    default:
      break;
  }
  const key = `sql.targets.${where.alias}${s ? `.statements.${s.name}` : ""}`;
  return new IdemError("INVALID_CONFIG", `${key}: ${where.what} failed: ${said}`, {
    cause: e,
    details: { key },
  });
}
