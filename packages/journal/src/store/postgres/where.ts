/** One condition with `?` placeholders and its parameters, or a skipped one (false/undefined). */
export type Condition = readonly [sql: string, ...args: unknown[]] | false | undefined;

/**
 * The WHERE clause (empty when no condition applies) with PostgreSQL's numbered parameters: the
 * `?` of each condition become `$n` in order, counting from `first`, so that a caller may put its
 * own parameters before them.
 */
export function where(
  conditions: readonly Condition[],
  first = 1,
): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  let n = first;
  for (const c of conditions) {
    if (!c) continue;
    parts.push(c[0].replace(/\?/g, () => `$${n++}`));
    for (let i = 1; i < c.length; i++) args.push(c[i]);
  }
  return { sql: parts.length ? `WHERE ${parts.join(" AND ")}` : "", args };
}
