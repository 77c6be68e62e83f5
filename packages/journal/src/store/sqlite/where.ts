/** One condition of a WHERE clause with its parameters, or a skipped one (false/undefined). */
export type Condition = readonly [sql: string, ...args: unknown[]] | false | undefined;

/**
 * The WHERE clause (empty when no condition is given) and the parameters of the conditions that
 * apply, in order: the one builder of the store's filtered reads (outputs.list, outputs.select and
 * page, events.list).
 */
export function where(conditions: readonly Condition[]): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  for (const c of conditions) {
    if (!c) continue;
    parts.push(c[0]);
    for (let i = 1; i < c.length; i++) args.push(c[i]);
  }
  return { sql: parts.length ? `WHERE ${parts.join(" AND ")}` : "", args };
}

/** A LIMIT clause for an optional limit (a negative or fractional one is clamped). */
export const limitClause = (limit: number | undefined): string =>
  limit !== undefined ? `LIMIT ${Math.max(0, Math.floor(limit))}` : "";

/** `?,?,?` for `n` parameters of an IN list (`NULL` for none, which matches nothing). */
export const placeholders = (n: number): string =>
  n === 0 ? "NULL" : Array.from({ length: n }, () => "?").join(",");
