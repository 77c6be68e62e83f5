-- The applied effects by the time they were applied: the console's chart counts them per minute
-- over the last hours through this index (a range of it), not by reading the whole ledger. Partial:
-- only the write that settles an effect as applied adds an entry. Built inside the migration's
-- transaction (writes to effects wait while it is built: seconds at millions of ledger rows).
CREATE INDEX "effects_applied" ON "effects" USING btree ("updated_at") WHERE state = 'applied';