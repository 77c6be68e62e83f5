CREATE TABLE `dead_letters` (
	`id` integer PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`agent` text,
	`class` text NOT NULL,
	`deliveries` integer NOT NULL,
	`last_error` text NOT NULL,
	`at` integer NOT NULL,
	`resolved_at` integer,
	`resolution` text
);
--> statement-breakpoint
CREATE INDEX `dead_letters_job` ON `dead_letters` (`job_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `dead_letters_open` ON `dead_letters` (`job_id`) WHERE resolved_at IS NULL;--> statement-breakpoint
CREATE INDEX `dead_letters_at` ON `dead_letters` (`at`);--> statement-breakpoint
CREATE TABLE `effects` (
	`id` integer PRIMARY KEY NOT NULL,
	`key` text NOT NULL,
	`generation` integer NOT NULL,
	`job_id` text NOT NULL,
	`idx` integer NOT NULL,
	`kind` text NOT NULL,
	`spec_hash` text NOT NULL,
	`state` text NOT NULL,
	`detail` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `effects_key_generation` ON `effects` (`key`,`generation`);--> statement-breakpoint
CREATE INDEX `effects_job` ON `effects` (`job_id`,`generation`,`idx`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`job_id` text,
	`type` text NOT NULL,
	`data` text,
	`actor` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_job` ON `events` (`job_id`,`id`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`seq` integer PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`agent` text NOT NULL,
	`input_hash` text NOT NULL,
	`input` text NOT NULL,
	`state` text NOT NULL,
	`due_at` integer,
	`deliveries` integer DEFAULT 0 NOT NULL,
	`lease_owner` text,
	`lease_token` text,
	`lease_until` integer,
	`next_at` integer,
	`stream_seq` integer,
	`last_error` text,
	`retries` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_job_id_unique` ON `jobs` (`job_id`);--> statement-breakpoint
CREATE INDEX `jobs_due` ON `jobs` (`due_at`,`seq`) WHERE state IN ('queued','running');--> statement-breakpoint
CREATE INDEX `jobs_created` ON `jobs` (`created_at`);--> statement-breakpoint
CREATE TABLE `outputs` (
	`seq` integer PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`agent` text NOT NULL,
	`content_hash` text NOT NULL,
	`body` text NOT NULL,
	`source` text NOT NULL,
	`recorded_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outputs_job_id_unique` ON `outputs` (`job_id`);--> statement-breakpoint
CREATE INDEX `outputs_recorded_at` ON `outputs` (`recorded_at`);--> statement-breakpoint
CREATE TABLE `prune_guard` (
	`id` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rejections` (
	`id` integer PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`content_hash` text NOT NULL,
	`body` text NOT NULL,
	`source` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rejections_job` ON `rejections` (`job_id`);--> statement-breakpoint
CREATE TABLE `run_targets` (
	`run_id` integer NOT NULL,
	`target` text NOT NULL,
	`active` integer DEFAULT 1 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `run_targets_run_target` ON `run_targets` (`run_id`,`target`);--> statement-breakpoint
CREATE INDEX `run_targets_active` ON `run_targets` (`target`,`run_id`) WHERE active = 1;--> statement-breakpoint
CREATE TABLE `runs` (
	`id` integer PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`generation` integer NOT NULL,
	`state` text NOT NULL,
	`due_at` integer,
	`lease_owner` text,
	`lease_token` text,
	`lease_until` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_expiries` integer DEFAULT 0 NOT NULL,
	`next_at` integer,
	`last_error` text,
	`class` text,
	`force_unprobeable` integer DEFAULT 0 NOT NULL,
	`targets` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runs_job_generation` ON `runs` (`job_id`,`generation`);--> statement-breakpoint
CREATE INDEX `runs_due` ON `runs` (`due_at`,`id`) WHERE state IN ('pending','running','failed');