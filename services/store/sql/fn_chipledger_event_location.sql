-- chipledger_event_location: stream and stream version of an event, by its id (through event_ids, which keeps ids
-- unique over the partitions; an event whose partition was archived is not found).
CREATE OR REPLACE FUNCTION chipledger_event_location(p_property text, p_event_id uuid)
RETURNS TABLE (stream text, stream_version bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT e.stream, e.stream_version FROM event_ids i
      JOIN events e ON e.property = i.property AND e.position = i.position
     WHERE i.property = p_property AND i.event_id = p_event_id;
END
$$;
