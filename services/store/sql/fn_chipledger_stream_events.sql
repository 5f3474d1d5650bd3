-- chipledger_stream_events: events of one stream with version > p_after_version, in version order, at most p_limit.
CREATE OR REPLACE FUNCTION chipledger_stream_events(p_property text, p_stream text, p_after_version bigint, p_limit bigint)
RETURNS TABLE (property text, "position" bigint, stream text, stream_version bigint, event_id uuid,
                event_type text, schema_version smallint, payload jsonb, metadata jsonb,
                recorded_at timestamptz, hash bytea, chain_format smallint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT e.property, e.position, e.stream, e.stream_version, e.event_id, e.event_type, e.schema_version,
               e.payload, e.metadata, e.recorded_at, e.hash, e.chain_format
      FROM events e
     WHERE e.property = p_property AND e.stream = p_stream AND e.stream_version > p_after_version
     ORDER BY e.stream_version
     LIMIT p_limit;
END
$$;
