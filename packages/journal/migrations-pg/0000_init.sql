CREATE TABLE "active_targets" (
	"target" text NOT NULL,
	"run_id" bigint NOT NULL,
	CONSTRAINT "active_targets_target_run_id_pk" PRIMARY KEY("target","run_id")
);
--> statement-breakpoint
CREATE TABLE "dead_letters" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"agent" text,
	"class" text NOT NULL,
	"deliveries" integer NOT NULL,
	"last_error" text NOT NULL,
	"at" bigint NOT NULL,
	"resolved_at" bigint,
	"resolution" text
);
--> statement-breakpoint
CREATE TABLE "effects" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"key" text NOT NULL,
	"generation" integer NOT NULL,
	"job_id" text NOT NULL,
	"idx" integer NOT NULL,
	"kind" text NOT NULL,
	"spec_hash" text NOT NULL,
	"state" text NOT NULL,
	"detail" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" bigint NOT NULL,
	"job_id" text,
	"type" text NOT NULL,
	"data" text,
	"actor" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "job_inputs" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"input" text NOT NULL,
	"traceparent" text
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"agent" text NOT NULL,
	"input_hash" text NOT NULL,
	"state" text NOT NULL,
	"due_at" bigint,
	"deliveries" integer DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_token" text,
	"lease_until" bigint,
	"next_at" bigint,
	"stream_seq" bigint,
	"last_error" text,
	"last_class" text,
	"retries" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "jobs_job_id_unique" UNIQUE("job_id")
);
--> statement-breakpoint
CREATE TABLE "outputs" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"agent" text NOT NULL,
	"content_hash" text NOT NULL,
	"body" text NOT NULL,
	"source" text NOT NULL,
	"recorded_at" bigint NOT NULL,
	"traceparent" text,
	CONSTRAINT "outputs_job_id_unique" UNIQUE("job_id")
);
--> statement-breakpoint
CREATE TABLE "prune_guard" (
	"id" integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rejections" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"content_hash" text NOT NULL,
	"body" text NOT NULL,
	"source" text NOT NULL,
	"at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"generation" integer NOT NULL,
	"state" text NOT NULL,
	"due_at" bigint,
	"lease_owner" text,
	"lease_token" text,
	"lease_until" bigint,
	"attempts" integer DEFAULT 0 NOT NULL,
	"lease_expiries" integer DEFAULT 0 NOT NULL,
	"next_at" bigint,
	"last_error" text,
	"class" text,
	"force_unprobeable" integer DEFAULT 0 NOT NULL,
	"targets" text DEFAULT '[]' NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "dead_letters_job" ON "dead_letters" USING btree ("job_id");--> statement-breakpoint
CREATE UNIQUE INDEX "dead_letters_open" ON "dead_letters" USING btree ("job_id") WHERE resolved_at IS NULL;--> statement-breakpoint
CREATE INDEX "dead_letters_at" ON "dead_letters" USING btree ("at");--> statement-breakpoint
CREATE UNIQUE INDEX "effects_key_generation" ON "effects" USING btree ("key","generation");--> statement-breakpoint
CREATE INDEX "effects_job" ON "effects" USING btree ("job_id","generation","idx");--> statement-breakpoint
CREATE INDEX "events_job" ON "events" USING btree ("job_id","id");--> statement-breakpoint
CREATE INDEX "jobs_due" ON "jobs" USING btree ("due_at","seq") WHERE state IN ('queued','running');--> statement-breakpoint
CREATE INDEX "outputs_recorded_at" ON "outputs" USING btree ("recorded_at");--> statement-breakpoint
CREATE INDEX "rejections_job" ON "rejections" USING btree ("job_id");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_job_generation" ON "runs" USING btree ("job_id","generation");--> statement-breakpoint
CREATE INDEX "runs_due" ON "runs" USING btree ("due_at","id") WHERE state IN ('pending','running','failed');