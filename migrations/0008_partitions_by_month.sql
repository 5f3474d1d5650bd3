-- 0008: events and postings partitioned by month of recorded_at (issue 11), every guarantee kept.
--
-- The plan is in services/store/src/lib.rs ("Partitioning of `events` by time"). In short:
--   * Keys: a partitioned table's unique keys must contain the partition key, so the parents get
--     PRIMARY KEY (property, position, recorded_at) and UNIQUE (property, stream, stream_version,
--     recorded_at). Uniqueness of (property, position) and (property, stream, stream_version)
--     across partitions keeps coming from the append (head lock, stream row locks, expected
--     versions; recorded_at is monotone in position per property) and verify_chain sees a break.
--     Event ids stay globally unique in `event_ids` (not partitioned: lookups by id, and the
--     uniqueness no partition can give), written by the append in the same statement.
--   * Cut-over without copying events: today's table becomes the first partition, holding every
--     row recorded before the cut-over (the first day of the month after the latest recorded_at,
--     or after now), attached behind a CHECK that makes ATTACH skip its scan. Monthly partitions
--     follow from the cut-over (chipledger_ensure_partitions, called by Store::migrate).
--   * postings get recorded_at (their event's, filled here once: a postings rewrite, so this
--     migration wants a quiet moment on a large database) and the same partitioning, so a month
--     of history is one unit for archive.
--   * Append-only per partition: the row triggers of a partitioned table are cloned onto every
--     partition by PostgreSQL; TRUNCATE triggers are per table, so every partition gets its own
--     (here for the first, in chipledger_ensure_partitions for the others). chipledger_app owns
--     nothing and has no privilege on any table: it cannot DETACH, DROP or TRUNCATE a partition.
--   * No DEFAULT partition: a row there would block creating the month it belongs to.
-- The whole migration is one transaction: nothing partial is ever visible.

-- Which partitions exist (and existed): the append reads the end of the last one to refuse,
-- loudly and typed (CL007), a time no partition holds; chipledger_ensure_partitions adds rows.
CREATE TABLE log_partitions (
    from_at          timestamptz NOT NULL PRIMARY KEY,
    until_at         timestamptz NOT NULL UNIQUE CHECK (until_at > from_at),
    events_table     text        NOT NULL UNIQUE,
    postings_table   text        NOT NULL UNIQUE,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Archived partitions (chipledgerd partitions archive): what left, signed, and where it went.
-- One row per partition; archive_anchors says per property where the live chain now starts.
CREATE TABLE archived_partitions (
    from_at        timestamptz NOT NULL PRIMARY KEY REFERENCES log_partitions (from_at),
    until_at       timestamptz NOT NULL,
    file_path      text        NOT NULL,
    file_sha256    bytea       NOT NULL CHECK (length(file_sha256) = 32),
    document       text        NOT NULL,
    archived_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- `partitions drop`, only after the archive's file verified: the tables are gone from then on.
CREATE TABLE dropped_partitions (
    from_at        timestamptz NOT NULL PRIMARY KEY REFERENCES archived_partitions (from_at),
    dropped_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Where each property's live chain continues from after an archive: the last archived
-- position, its hash and chain format (verify starts there instead of genesis).
CREATE TABLE archive_anchors (
    property       text        NOT NULL,
    position       bigint      NOT NULL CHECK (position > 0),
    hash           bytea       NOT NULL CHECK (length(hash) = 32),
    chain_format   smallint    NOT NULL,
    events         bigint      NOT NULL CHECK (events > 0),
    from_at        timestamptz NOT NULL REFERENCES archived_partitions (from_at),
    PRIMARY KEY (property, position)
);
-- Balances carried past an archive (balance as of a live position = carried + live postings).
CREATE TABLE archive_balances (
    property       text        NOT NULL,
    account        text        NOT NULL,
    from_at        timestamptz NOT NULL REFERENCES archived_partitions (from_at),
    balance_cents  bigint      NOT NULL,
    PRIMARY KEY (property, account, from_at)
);
-- Event ids, unique over all partitions and archives.
CREATE TABLE event_ids (
    event_id uuid   NOT NULL PRIMARY KEY,
    property text   NOT NULL,
    position bigint NOT NULL
);
-- A balance as of a position inside an archive cannot be answered from the live log (the
-- balance functions of sql/ call this first): CL008 with the last archived position.
CREATE FUNCTION chipledger_refuse_archived_position(p_property text, p_position bigint) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_anchor bigint := (SELECT max(a.position) FROM archive_anchors a WHERE a.property = p_property);
BEGIN
    IF v_anchor IS NOT NULL AND p_position < v_anchor THEN
        RAISE EXCEPTION 'chipledger: position % is archived', p_position USING ERRCODE = 'CL008',
            DETAIL = json_build_object('position', p_position, 'archived_through', v_anchor)::text;
    END IF;
END
$$;
INSERT INTO event_ids (event_id, property, position) SELECT event_id, property, position FROM events;

-- The view that joined events on event_id (0003) is made again below, through event_ids.
DROP VIEW player_seatings;

-- postings.recorded_at: the time of their event (the trigger refuses UPDATE: lifted for this
-- one fill inside this transaction, as 0007 did for commands).
ALTER TABLE postings ADD COLUMN recorded_at timestamptz;
ALTER TABLE postings DISABLE TRIGGER postings_append_only;
UPDATE postings p SET recorded_at = e.recorded_at FROM events e
 WHERE e.property = p.property AND e.position = p.position;
ALTER TABLE postings ENABLE TRIGGER postings_append_only;
ALTER TABLE postings ALTER COLUMN recorded_at SET NOT NULL;

DO $$
DECLARE
    v_cutover timestamptz;
    v_events   text;
    v_postings text;
BEGIN
    SET LOCAL TimeZone = 'UTC';
    v_cutover := date_trunc('month', greatest(clock_timestamp(),
                     (SELECT max(recorded_at) FROM events) + interval '1 microsecond',
                     (SELECT max(last_recorded_at) FROM property_heads) + interval '1 microsecond'))
                 + interval '1 month';
    v_events := 'events_before_' || to_char(v_cutover, 'YYYY_MM');
    v_postings := 'postings_before_' || to_char(v_cutover, 'YYYY_MM');

    -- The old tables under their new names, without the keys a partitioned parent cannot have
    -- (UNIQUE (event_id) moved to event_ids; the others come back with recorded_at in them)
    -- and without their row triggers (the parents' are cloned onto every partition, this one too).
    EXECUTE format('ALTER TABLE events RENAME TO %I', v_events);
    EXECUTE format('ALTER TABLE postings RENAME TO %I', v_postings);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT events_event_id_key', v_events);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT events_pkey', v_events);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT events_property_stream_stream_version_key', v_events);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT postings_pkey', v_postings);
    EXECUTE format('DROP TRIGGER events_append_only ON %I', v_events);
    EXECUTE format('DROP TRIGGER postings_append_only ON %I', v_postings);

    -- The parents take the old names, columns, defaults and CHECKs.
    EXECUTE format('CREATE TABLE events (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (recorded_at)', v_events);
    EXECUTE format('CREATE TABLE postings (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (recorded_at)', v_postings);
    ALTER TABLE events ADD PRIMARY KEY (property, position, recorded_at);
    ALTER TABLE events ADD UNIQUE (property, stream, stream_version, recorded_at);
    -- Same definitions as the old read indexes: ATTACH adopts those instead of building anew.
    CREATE INDEX events_by_recorded_at ON events (property, recorded_at);
    ALTER TABLE postings ADD PRIMARY KEY (property, position, posting_index, recorded_at);
    CREATE INDEX postings_by_account ON postings (property, account, position) INCLUDE (amount_cents);

    -- Every old row is before the cut-over: the CHECK lets ATTACH skip its scan of the rows.
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (recorded_at < %L)', v_events, v_events || '_range', v_cutover);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (recorded_at < %L)', v_postings, v_postings || '_range', v_cutover);
    EXECUTE format('ALTER TABLE events ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', v_events, v_cutover);
    EXECUTE format('ALTER TABLE postings ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', v_postings, v_cutover);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', v_events, v_events || '_range');
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', v_postings, v_postings || '_range');

    -- The first partition's range starts at MINVALUE; the registry says '-infinity'.
    INSERT INTO log_partitions (from_at, until_at, events_table, postings_table)
    VALUES ('-infinity', v_cutover, v_events, v_postings);
END
$$;

-- Append-only (R-AUDIT-1): the parents (their row triggers are cloned onto every partition; a
-- TRUNCATE of a partition meets the partition's own trigger) and the new tables, refused by
-- trigger; nobody but the owner has a privilege on any of them.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['events', 'postings', 'log_partitions', 'archived_partitions', 'dropped_partitions', 'archive_anchors',
                             'archive_balances', 'event_ids'] LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change()',
                       t || '_append_only', t);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change()',
                       t || '_no_truncate', t);
    END LOOP;
END
$$;

-- 0003's view, joining the seating event through event_ids.
CREATE VIEW player_seatings AS
SELECT s.property, s.player_id, s.table_id, s.seat, s.game_key,
       coalesce(s.seated_at_ms, floor(extract(epoch FROM e.recorded_at) * 1000)::bigint) AS seated_at_ms
  FROM player_sessions s
  LEFT JOIN event_ids i ON i.event_id = s.seated_event_id AND i.property = s.property
  LEFT JOIN events e ON e.property = i.property AND e.position = i.position;

REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM chipledger_app;
