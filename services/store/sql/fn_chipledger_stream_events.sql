-- chipledger_stream_events: events of one stream with version > p_after_version, in version order, at most p_limit
-- (the read of several streams, fn_chipledger_streams_events.sql, with one).
CREATE OR REPLACE FUNCTION chipledger_stream_events(p_property text, p_stream text, p_after_version bigint, p_limit bigint)
RETURNS TABLE (property text, "position" bigint, stream text, stream_version bigint, event_id uuid,
                event_type text, schema_version smallint, payload jsonb, metadata jsonb,
                recorded_at timestamptz, hash bytea, chain_format smallint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY SELECT * FROM chipledger_streams_events(p_property, ARRAY[p_stream], ARRAY[p_after_version], p_limit);
END
$$;
