-- chipledger_ensure_partitions: monthly partitions of events and postings (UTC months of recorded_at) from the
-- end of the last one up to and including the month p_months_ahead after the later of now and the latest
-- recorded_at of any property; returns how many months it created. Each new partition gets its TRUNCATE triggers
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
BEGIN
    IF p_months_ahead IS NULL OR p_months_ahead < 0 OR p_months_ahead > 120 THEN
        RAISE EXCEPTION 'chipledger: months ahead must be 0..=120' USING ERRCODE = 'CL005',
            DETAIL = json_build_object('reason', 'months ahead must be 0..=120', 'months_ahead', p_months_ahead)::text;
    END IF;
    -- One creator at a time (the service's replicas and the admin step may call it together).
    PERFORM pg_advisory_xact_lock(hashtext('chipledger_ensure_partitions'));
    v_target := date_trunc('month', greatest(clock_timestamp(), (SELECT max(h.last_recorded_at) FROM property_heads h)))
                + make_interval(months => p_months_ahead + 1);
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
