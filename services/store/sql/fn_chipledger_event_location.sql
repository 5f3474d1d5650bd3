-- chipledger_event_location: stream and stream version of an event, by its id.
CREATE OR REPLACE FUNCTION chipledger_event_location(p_property text, p_event_id uuid)
RETURNS TABLE (stream text, stream_version bigint)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
SELECT e.stream, e.stream_version FROM events e WHERE e.property = p_property AND e.event_id = p_event_id
$$;
