import type { Config } from "@idem/schema";

/**
 * A kind's section of a test's config (`repos`, `roots`, `publish`, `http`), made when missing, to
 * fill in place before the kinds are opened: what a test writes instead of the config file's JSON.
 */
export function configSection<T = Record<string, unknown>>(
  config: Config,
  name: string,
  empty: () => T = () => ({}) as T,
): T {
  const sections = config.sections as Record<string, unknown>;
  if (!Object.hasOwn(sections, name)) sections[name] = empty();
  return sections[name] as T;
}
