// The small pieces every config section is built from (idem's own and the effect kinds').
import { z } from "zod";

export const ms = z.number().int().nonnegative();
export const positiveMs = z.number().int().positive();
