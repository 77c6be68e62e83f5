-- The per-target order keeps only what it needs: the targets of runs in flight, in one WITHOUT ROWID
-- b-tree (run_targets kept a row per target for every run ever, in a table and two indexes).
CREATE TABLE `active_targets` (
	`target` text NOT NULL,
	`run_id` integer NOT NULL,
	PRIMARY KEY(`target`, `run_id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `active_targets` (`target`, `run_id`) SELECT `target`, `run_id` FROM `run_targets` WHERE `active` = 1;
--> statement-breakpoint
DROP TABLE `run_targets`;
