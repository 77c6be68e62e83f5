// The small pieces every config section is built from (idem's own and the effect kinds').
import { z } from "zod";
import { ALIAS_PATTERN } from "./ids.js";

export const ms = z.number().int().nonnegative();
export const positiveMs = z.number().int().positive();
/** A record keyed by alias (`<section>.<alias>`), empty by default. */
export const aliasMap = <T extends z.ZodType>(value: T) =>
  z
    .record(z.string().regex(ALIAS_PATTERN, "must be an alias: letters, digits, _ and -"), value)
    .default({} as never);
