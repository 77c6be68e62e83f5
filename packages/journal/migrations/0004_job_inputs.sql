-- A job's input moves out of `jobs`: every delivery rewrites the jobs row (lease, stream seq, done), and
-- with the input in it each rewrite copied about 1 KB and dirtied a page per three or four jobs.
CREATE TABLE `job_inputs` (
	`seq` integer PRIMARY KEY NOT NULL,
	`input` text NOT NULL
);
--> statement-breakpoint
INSERT INTO `job_inputs` (`seq`, `input`) SELECT `seq`, `input` FROM `jobs`;
--> statement-breakpoint
ALTER TABLE `jobs` DROP COLUMN `input`;
--> statement-breakpoint
CREATE TRIGGER job_inputs_no_update BEFORE UPDATE ON job_inputs
BEGIN SELECT RAISE(ABORT, 'idem: job inputs are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER job_inputs_no_delete BEFORE DELETE ON job_inputs WHEN NOT EXISTS (SELECT 1 FROM prune_guard)
BEGIN SELECT RAISE(ABORT, 'idem: job inputs are deleted only by prune'); END;
