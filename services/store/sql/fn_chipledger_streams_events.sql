-- chipledger_streams_events: the events of several streams in one call (a command's or a batch's streams, as the
-- server loads them to decide): for each stream of p_streams the events with version > its p_after_versions entry,
-- at most p_limit, in version order; the streams in array order.
CREATE OR REPLACE FUNCTION chipledger_streams_events(p_property text, p_streams text[], p_after_versions bigint[],
                                                     p_limit bigint)
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
    SELECT x.property, x.position, x.stream, x.stream_version, x.event_id, x.event_type, x.schema_version,
           x.payload, x.metadata, x.recorded_at, x.hash, x.chain_format
      FROM unnest(p_streams, p_after_versions) WITH ORDINALITY AS s(name, after_version, ord)
     CROSS JOIN LATERAL (
            SELECT e.property, e.position, e.stream, e.stream_version, e.event_id, e.event_type, e.schema_version,
                   e.payload, e.metadata, e.recorded_at, e.hash, e.chain_format
              FROM events e
             WHERE e.property = p_property AND e.stream = s.name AND e.stream_version > s.after_version
             ORDER BY e.stream_version
             LIMIT p_limit) x
     ORDER BY s.ord, x.stream_version;
END
$$;
