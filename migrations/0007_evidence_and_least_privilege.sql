-- 0007: evidence nobody can quietly rewrite, and the application role down to EXECUTE.
--
-- Tables, columns, indexes and privileges only. The functions the application role calls live
-- one file per object in services/store/sql/ and are applied (CREATE OR REPLACE) after the
-- numbered migrations by Store::migrate, which also creates the roles before this runs and
-- runs it as chipledger_owner (the role nobody logs in as, owner of every object here).
--
-- Chain format 2 (services/store/src/chain.rs): every entry is hashed as the RFC 8785 (JCS)
-- form of one JSON object, so a verifier can recompute it with any JCS library. Events written
-- before this migration keep format 1 (the verifier knows both; a format 1 entry after a
-- format 2 entry is refused). Refusals get a chain of their own per property; every command
-- id's result is bound into the entry of its append's last event.

ALTER TABLE events ADD COLUMN chain_format smallint NOT NULL DEFAULT 1 CHECK (chain_format IN (1, 2));

-- The refusal chain's head, next to the event chain's: same row, same lock.
ALTER TABLE property_heads
    ADD COLUMN last_refusal_seq  bigint NOT NULL DEFAULT 0 CHECK (last_refusal_seq >= 0),
    ADD COLUMN last_refusal_hash bytea  NOT NULL
        DEFAULT '\x0000000000000000000000000000000000000000000000000000000000000000'
        CHECK (length(last_refusal_hash) = 32);

-- Refusals remembered (R-AUDIT-3): a refused command id is a command id taken for good. A
-- rejection of chain format 2 has its place in the refusal chain (refusal_seq, hash), the
-- request hash it answers, the exact reply given (status bytes), and names the player and the
-- gaming day. Rejections recorded before 0007 stay as they were (refusal_seq NULL: unchained).
ALTER TABLE rejections
    ADD COLUMN refusal_seq  bigint CHECK (refusal_seq > 0),
    ADD COLUMN hash         bytea  CHECK (length(hash) = 32),
    ADD COLUMN request_hash bytea  CHECK (length(request_hash) = 32),
    ADD COLUMN player_id    text,
    ADD COLUMN gaming_day   date,
    ADD COLUMN reply        bytea,
    ADD CONSTRAINT rejections_chained_whole CHECK (
        (refusal_seq IS NULL AND hash IS NULL AND request_hash IS NULL AND reply IS NULL)
        OR (refusal_seq IS NOT NULL AND hash IS NOT NULL AND request_hash IS NOT NULL AND reply IS NOT NULL));
CREATE UNIQUE INDEX rejections_by_seq ON rejections (property, refusal_seq);
CREATE UNIQUE INDEX rejections_by_command ON rejections (property, command_id) WHERE refusal_seq IS NOT NULL;
CREATE INDEX rejections_by_player_day ON rejections (property, player_id, gaming_day);

-- Every command id, accepted or refused: the primary key is the one place two replicas racing
-- on one id meet. An accepted command keeps its append's outcome and reply, and the position
-- of the append's last event, whose chain entry binds them; a refused one points at its
-- rejection.
ALTER TABLE commands
    ADD COLUMN last_position bigint,
    ADD COLUMN refusal_seq   bigint,
    ALTER COLUMN append_id DROP NOT NULL,
    ALTER COLUMN outcome DROP NOT NULL,
    ALTER COLUMN reply DROP NOT NULL;
ALTER TABLE commands DISABLE TRIGGER commands_append_only;
UPDATE commands SET last_position = (outcome::jsonb ->> 'last_position')::bigint;
ALTER TABLE commands ENABLE TRIGGER commands_append_only;
ALTER TABLE commands ADD CONSTRAINT commands_accepted_or_refused CHECK (
    (refusal_seq IS NULL AND append_id IS NOT NULL AND outcome IS NOT NULL AND reply IS NOT NULL
     AND last_position IS NOT NULL)
    OR (refusal_seq IS NOT NULL AND append_id IS NULL AND outcome IS NULL AND reply IS NULL
        AND last_position IS NULL));
CREATE INDEX commands_by_position ON commands (property, last_position) WHERE last_position IS NOT NULL;

-- Signed checkpoints (chain position and head hash, refusal seq and head hash, time, format),
-- kept here for the fetch RPC. The evidence is the copies kept outside the database: this table
-- is only a convenience, and deleting from it hides nothing a kept copy shows.
CREATE TABLE checkpoints (
    property     text        NOT NULL,
    position     bigint      NOT NULL CHECK (position >= 0),
    refusal_seq  bigint      NOT NULL CHECK (refusal_seq >= 0),
    key_id       text        NOT NULL,
    signed_at    timestamptz NOT NULL,
    document     text        NOT NULL,
    PRIMARY KEY (property, position, refusal_seq, key_id)
);
CREATE TRIGGER checkpoints_append_only BEFORE UPDATE OR DELETE ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change();
CREATE TRIGGER checkpoints_no_truncate BEFORE TRUNCATE ON checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change();

-- What the admin step last installed: the service compares it with what it was built with.
CREATE TABLE schema_state (
    singleton         boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    functions_sha256  text    NOT NULL
);

-- The 0006 append is replaced by services/store/sql/fn_chipledger_append.sql (new arguments).
DROP FUNCTION chipledger_append(text, uuid, text[], bytea[], bytea, text[], bigint[], int[], uuid[], text[],
                                smallint[], jsonb[], jsonb[], bytea[], int[], smallint[], text[], bigint[], jsonb[]);

-- Least privilege: the application role keeps no privilege on any table or view; it reaches
-- the data only through the SECURITY DEFINER functions granted in services/store/sql/grants.sql.
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM chipledger_app;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM chipledger_app;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
