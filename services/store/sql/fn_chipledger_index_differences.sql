-- chipledger_index_differences: where the rows the chain does not cover disagree with the events, in one snapshot
-- (appends may run meanwhile): the index of event ids (event id -> position; a correction finds the event it
-- reverses through it) and the streams' versions (the expected versions of optimistic concurrency). One row per
-- disagreement: what it is, its key, what is stored and what the events say ('-' for nothing).
CREATE OR REPLACE FUNCTION chipledger_index_differences(p_property text)
RETURNS TABLE (projection text, key text, stored text, recomputed text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT 'event_ids'::text, coalesce(i.event_id, e.event_id)::text,
           coalesce(i.position::text, '-'), coalesce(e.position::text, '-')
      FROM (SELECT * FROM event_ids WHERE property = p_property) i
      FULL JOIN (SELECT event_id, position FROM events WHERE property = p_property) e ON e.event_id = i.event_id
     WHERE i.position IS DISTINCT FROM e.position;
    RETURN QUERY
    SELECT 'streams'::text, coalesce(s.stream, e.stream), coalesce(s.version::text, '-'), coalesce(e.version::text, '-')
      FROM (SELECT stream, version FROM streams WHERE property = p_property) s
      FULL JOIN (SELECT stream, max(stream_version) AS version FROM events WHERE property = p_property GROUP BY stream) e
        ON e.stream = s.stream
     WHERE s.version IS DISTINCT FROM e.version;
END
$$;
