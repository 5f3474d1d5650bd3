-- chipledger_report_events: what the table/day report reads of events after a position: position, stream and the
-- gaming day ('' when the metadata has no string there).
CREATE OR REPLACE FUNCTION chipledger_report_events(p_property text, p_after bigint, p_limit bigint)
RETURNS TABLE ("position" bigint, stream text, gaming_day text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT e.position, e.stream,
           CASE jsonb_typeof(e.metadata -> 'gaming_day') WHEN 'string' THEN e.metadata ->> 'gaming_day' ELSE '' END
      FROM events e WHERE e.property = p_property AND e.position > p_after
     ORDER BY e.position LIMIT p_limit;
END
$$;
