-- Invariant 2: outputs are never updated, and deleted only by `idem prune` (a guard row inside its own transaction).
CREATE TRIGGER outputs_no_update BEFORE UPDATE ON outputs
BEGIN SELECT RAISE(ABORT, 'idem: outputs are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER outputs_no_delete BEFORE DELETE ON outputs WHEN NOT EXISTS (SELECT 1 FROM prune_guard)
BEGIN SELECT RAISE(ABORT, 'idem: outputs are deleted only by prune'); END;
--> statement-breakpoint
CREATE TRIGGER rejections_no_update BEFORE UPDATE ON rejections
BEGIN SELECT RAISE(ABORT, 'idem: rejections are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER rejections_no_delete BEFORE DELETE ON rejections WHEN NOT EXISTS (SELECT 1 FROM prune_guard)
BEGIN SELECT RAISE(ABORT, 'idem: rejections are deleted only by prune'); END;
--> statement-breakpoint
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'idem: events are append-only'); END;
--> statement-breakpoint
CREATE TRIGGER events_no_delete BEFORE DELETE ON events WHEN NOT EXISTS (SELECT 1 FROM prune_guard)
BEGIN SELECT RAISE(ABORT, 'idem: events are deleted only by prune'); END;
--> statement-breakpoint
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs WHEN NOT EXISTS (SELECT 1 FROM prune_guard)
BEGIN SELECT RAISE(ABORT, 'idem: runs are deleted only by prune'); END;
--> statement-breakpoint
CREATE TRIGGER effects_no_delete BEFORE DELETE ON effects WHEN NOT EXISTS (SELECT 1 FROM prune_guard)
BEGIN SELECT RAISE(ABORT, 'idem: effects are deleted only by prune'); END;
