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
