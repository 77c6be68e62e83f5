/**
 * The entry named `name` of a config record (`repos`, `roots`, `publish`, `http.targets`,
 * `agents`), by own property only, or undefined.
 *
 * Every alias lookup goes through it: a plain `record[name]` answers `constructor`, `toString`,
 * `hasOwnProperty` or `__proto__` with a property every JavaScript object has, so an agent naming
 * one would pass validation and fail later (issue 31). Pure, never throws.
 */
export function aliasOf<T>(record: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}
