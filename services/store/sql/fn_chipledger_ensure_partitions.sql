-- chipledger_ensure_partitions: monthly partitions of events and postings (UTC months of recorded_at) from the
-- end of the last one up to and including the month p_months_ahead after the later of now and the latest
-- recorded_at of any property, and again any such month of now or later whose tables are gone; returns how many
-- months (or, for a month made again, tables) it created. Each new partition gets its TRUNCATE triggers
-- (the row triggers are cloned by PostgreSQL) and no privilege for anyone but its owner. Run by Store::migrate and
-- daily by the service (chipledger_app may execute it: it only ever creates the next months, a bounded number,
-- never touches a row, and waits at most lock_timeout for the parents). Never called inside an append.
CREATE OR REPLACE FUNCTION chipledger_ensure_partitions(p_months_ahead int)
RETURNS int
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
SET TimeZone = 'UTC'
SET lock_timeout = '5s'
AS $$
DECLARE
    v_target   timestamptz;
    v_from     timestamptz;
    v_until    timestamptz;
    v_events   text;
    v_postings text;
    v_created  int := 0;
    v_row      record;
    v_table    text;
    v_parent   text;
BEGIN
    IF p_months_ahead IS NULL OR p_months_ahead < 0 OR p_months_ahead > 120 THEN
        RAISE EXCEPTION 'chipledger: months ahead must be 0..=120' USING ERRCODE = 'CL005',
            DETAIL = json_build_object('reason', 'months ahead must be 0..=120', 'months_ahead', p_months_ahead)::text;
    END IF;
    -- One creator at a time (the service's replicas and the admin step may call it together).
    PERFORM pg_advisory_xact_lock(hashtext('chipledger_ensure_partitions'));
    v_target := date_trunc('month', greatest(clock_timestamp(), (SELECT max(h.last_recorded_at) FROM property_heads h)))
                + make_interval(months => p_months_ahead + 1);
    -- A month of now or later that the log lists but whose tables are gone is made again (the
    -- insider pass dropped next March's: it was still listed, and every append in March would have
    -- failed). One still there but detached is refused: its rows are not the log's to take back.
    FOR v_row IN SELECT l.from_at, l.until_at, l.events_table, l.postings_table FROM log_partitions l
                  WHERE l.until_at > date_trunc('month', clock_timestamp()) AND l.from_at <> '-infinity' ORDER BY l.from_at LOOP
        FOREACH v_table IN ARRAY ARRAY[v_row.events_table, v_row.postings_table] LOOP
            v_parent := CASE WHEN v_table = v_row.events_table THEN 'events' ELSE 'postings' END;
            IF to_regclass(v_table) IS NULL THEN
                EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', v_table, v_parent, v_row.from_at, v_row.until_at);
                EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change()',
                               v_table || '_no_truncate', v_table);
                EXECUTE format('REVOKE ALL ON %I FROM PUBLIC, chipledger_app', v_table);
                v_created := v_created + 1;
            ELSIF NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = to_regclass(v_table) AND i.inhparent = v_parent::regclass) THEN
                RAISE EXCEPTION 'chipledger: partition % is detached from %', v_table, v_parent USING ERRCODE = 'CL005',
                    DETAIL = json_build_object('reason', 'a month of the log is detached: attach it again or drop it', 'table', v_table)::text;
            END IF;
        END LOOP;
    END LOOP;
    SELECT max(l.until_at) INTO v_from FROM log_partitions l;
    WHILE v_from < v_target LOOP
        v_until := v_from + interval '1 month';
        v_events := 'events_' || to_char(v_from, 'YYYY_MM');
        v_postings := 'postings_' || to_char(v_from, 'YYYY_MM');
        EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)', v_events, v_from, v_until);
        EXECUTE format('CREATE TABLE %I PARTITION OF postings FOR VALUES FROM (%L) TO (%L)', v_postings, v_from, v_until);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change()',
                       v_events || '_no_truncate', v_events);
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION chipledger_refuse_change()',
                       v_postings || '_no_truncate', v_postings);
        EXECUTE format('REVOKE ALL ON %I, %I FROM PUBLIC, chipledger_app', v_events, v_postings);
        INSERT INTO log_partitions (from_at, until_at, events_table, postings_table)
        VALUES (v_from, v_until, v_events, v_postings);
        v_created := v_created + 1;
        v_from := v_until;
    END LOOP;
    RETURN v_created;
END
$$;
