import { z } from "zod";

/**
 * `kinds.<name>`: an effect kind of the operator's own (docs/effect-kinds.md): the module that
 * exports it (`export default defineEffectKind({ ... })`; a path relative to the config file, or a
 * package name resolved from its folder) and its options, parsed by the kind's own schema when the
 * registry loads it. Credentials are never options: the options name the environment variables.
 */
export const KindConfigSchema = z.strictObject({
  module: z.string().min(1),
  options: z.json().optional(),
});
/** A parsed `kinds.<name>` entry. */
export type KindConfig = z.infer<typeof KindConfigSchema>;

/**
 * The config sections of idem's own kinds that need options (docs/kinds/): parsed by the kinds'
 * own schemas when the registry is built, an error naming `<section>.<key>`. Without its section a
 * kind is not available.
 */
export const KIND_SECTIONS = {
  /** The github.* kinds: `{ baseUrl?, tokenEnv?, repos: { <alias>: { owner, name } }, ... }`. */
  github: z.json().optional(),
  /** slack.message: `{ tokenEnv?, channels: { <alias>: "C..." }, ... }`. */
  slack: z.json().optional(),
  /**
   * sql.exec: `{ targets: { <alias>: { dialect, url? | urlEnv?, keyTable?, statements: { <name>:
   * { sql, params } }, ... } } }` (docs/kinds/sql.md).
   */
  sql: z.json().optional(),
};
