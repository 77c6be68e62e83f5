// The `roots` section of the config, owned by file.write: the folders it writes under, by alias.
import { isAbsolute, resolve } from "node:path";
import { ALIAS_PATTERN, type OptionsSource } from "@idem/kit";
import { z } from "zod";

/** `roots.<alias>`: a folder that `file.write` effects write under. */
export const RootConfigSchema = z.strictObject({ path: z.string().min(1) });

/** The `roots` section: file.write's options. */
export const FileRootsSchema = z.record(
  z.string().regex(ALIAS_PATTERN, "must be an alias: letters, digits, _ and -"),
  RootConfigSchema,
);

/** file.write's options: every configured root by alias, its path absolute. */
export type FileRoots = Readonly<Record<string, z.infer<typeof RootConfigSchema>>>;

/** The roots with every path absolute against the config's folder (again: unchanged). */
export function resolveFileRoots(roots: FileRoots, source: OptionsSource): FileRoots {
  return Object.fromEntries(
    Object.entries(roots).map(([alias, r]) => [
      alias,
      { path: isAbsolute(r.path) ? r.path : resolve(source.dir, r.path) },
    ]),
  );
}
