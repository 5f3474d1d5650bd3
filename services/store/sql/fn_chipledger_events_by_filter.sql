-- chipledger_events_by_filter: events after a position matching every filter given (NULL matches all), in position order.
CREATE OR REPLACE FUNCTION chipledger_events_by_filter(p_property text, p_after bigint, p_stream text, p_event_type text, p_actor_id text, p_command_id text,
    p_gaming_day text, p_account text, p_limit bigint)
RETURNS TABLE (property text, "position" bigint, stream text, stream_version bigint, event_id uuid,
                event_type text, schema_version smallint, payload jsonb, metadata jsonb,
                recorded_at timestamptz, hash bytea, chain_format smallint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT e.property, e.position, e.stream, e.stream_version, e.event_id, e.event_type, e.schema_version,
               e.payload, e.metadata, e.recorded_at, e.hash, e.chain_format
      FROM events e
     WHERE e.property = p_property AND e.position > p_after
       AND (p_stream IS NULL OR e.stream = p_stream)
       AND (p_event_type IS NULL OR e.event_type = p_event_type)
       AND (p_actor_id IS NULL OR e.metadata ->> 'actor_id' = p_actor_id)
       AND (p_command_id IS NULL OR e.metadata ->> 'command_id' = p_command_id)
       AND (p_gaming_day IS NULL OR e.metadata ->> 'gaming_day' = p_gaming_day)
       AND (p_account IS NULL OR EXISTS (SELECT 1 FROM postings p WHERE p.property = e.property
                                            AND p.position = e.position AND p.account = p_account))
     ORDER BY e.position
     LIMIT p_limit;
END
$$;
