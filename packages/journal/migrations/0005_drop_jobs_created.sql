-- Every enqueue wrote an index entry on jobs.created_at that only the outbox republish read, and
-- that query reads queued and running jobs, which the partial index jobs_due already holds.
DROP INDEX `jobs_created`;