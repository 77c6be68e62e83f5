-- Invariant 2, as on SQLite (migrations/0001 and 0004): outputs, rejections, events and job inputs are
-- never updated; they, runs and effects are deleted only by `idem prune`, which inserts a row into
-- prune_guard inside its own transaction (a row no other transaction sees before it commits, and the
-- prune deletes it again before it does).
CREATE FUNCTION idem_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'idem: % rows are immutable', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END $$;
--> statement-breakpoint
CREATE FUNCTION idem_guard_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM prune_guard) THEN
    RAISE EXCEPTION 'idem: % rows are deleted only by prune', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN OLD;
END $$;
--> statement-breakpoint
CREATE TRIGGER outputs_no_update BEFORE UPDATE ON outputs FOR EACH ROW EXECUTE FUNCTION idem_refuse_update();
--> statement-breakpoint
CREATE TRIGGER outputs_no_delete BEFORE DELETE ON outputs FOR EACH ROW EXECUTE FUNCTION idem_guard_delete();
--> statement-breakpoint
CREATE TRIGGER rejections_no_update BEFORE UPDATE ON rejections FOR EACH ROW EXECUTE FUNCTION idem_refuse_update();
--> statement-breakpoint
CREATE TRIGGER rejections_no_delete BEFORE DELETE ON rejections FOR EACH ROW EXECUTE FUNCTION idem_guard_delete();
--> statement-breakpoint
CREATE TRIGGER events_no_update BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION idem_refuse_update();
--> statement-breakpoint
CREATE TRIGGER events_no_delete BEFORE DELETE ON events FOR EACH ROW EXECUTE FUNCTION idem_guard_delete();
--> statement-breakpoint
CREATE TRIGGER job_inputs_no_update BEFORE UPDATE ON job_inputs FOR EACH ROW EXECUTE FUNCTION idem_refuse_update();
--> statement-breakpoint
CREATE TRIGGER job_inputs_no_delete BEFORE DELETE ON job_inputs FOR EACH ROW EXECUTE FUNCTION idem_guard_delete();
--> statement-breakpoint
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs FOR EACH ROW EXECUTE FUNCTION idem_guard_delete();
--> statement-breakpoint
CREATE TRIGGER effects_no_delete BEFORE DELETE ON effects FOR EACH ROW EXECUTE FUNCTION idem_guard_delete();
--> statement-breakpoint
-- TRUNCATE fires no row trigger: refuse it on the immutable tables outright.
CREATE TRIGGER outputs_no_truncate BEFORE TRUNCATE ON outputs FOR EACH STATEMENT EXECUTE FUNCTION idem_refuse_update();
--> statement-breakpoint
CREATE TRIGGER rejections_no_truncate BEFORE TRUNCATE ON rejections FOR EACH STATEMENT EXECUTE FUNCTION idem_refuse_update();
--> statement-breakpoint
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION idem_refuse_update();
