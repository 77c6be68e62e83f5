-- A replay's effect filter (only these effects: kinds, repos, roots, targets; null: every effect) and
-- its lineage (actor, reason, selection, the generation it replays), kept with the run it created.
ALTER TABLE "runs" ADD COLUMN "effect_filter" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "replay" text;