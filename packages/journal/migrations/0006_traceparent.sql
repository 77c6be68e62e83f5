-- The W3C trace context (traceparent) a job was enqueued under and an output was recorded under:
-- kept with the immutable rows, never part of their hash. ADD COLUMN does not fire the triggers
-- that keep outputs and job inputs immutable.
ALTER TABLE `job_inputs` ADD `traceparent` text;--> statement-breakpoint
ALTER TABLE `outputs` ADD `traceparent` text;