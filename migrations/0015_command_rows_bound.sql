-- 0015: a command row is bound to a position of the log or to a refusal of the chain, once each
-- (the evidence pass planted a row for a command id not yet sent, bound to position -1, which
-- answered that command's first sending as a replay of another, and verify counted only rows
-- bound from position 1 on; a second row pointing at an existing refusal was verified in the
-- real row's place). Verify names such rows too; these refuse them at the door.
ALTER TABLE commands ADD CONSTRAINT commands_bound_to_the_log CHECK (last_position IS NULL OR last_position > 0);
ALTER TABLE commands ADD CONSTRAINT commands_bound_to_a_refusal CHECK (refusal_seq IS NULL OR refusal_seq > 0);
CREATE UNIQUE INDEX commands_one_per_refusal ON commands (property, refusal_seq) WHERE refusal_seq IS NOT NULL;
