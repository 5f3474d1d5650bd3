-- chipledger_events_range: events with p_after < position <= p_up_to, in position order (rows come out in the
-- order of the query: a SECURITY DEFINER function is never inlined), at most p_limit.
CREATE OR REPLACE FUNCTION chipledger_events_range(p_property text, p_after bigint, p_up_to bigint, p_limit bigint)
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
     WHERE e.property = p_property AND e.position > p_after AND e.position <= p_up_to
     ORDER BY e.position
     LIMIT p_limit;
END
$$;
