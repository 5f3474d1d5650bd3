-- chipledger_lag: for a subscriber at p_delivered: the head position, the time the next event was recorded
-- (NULL when none is pending) and the database's clock.
CREATE OR REPLACE FUNCTION chipledger_lag(p_property text, p_delivered bigint)
RETURNS TABLE (head_position bigint, oldest_pending timestamptz, now timestamptz)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT coalesce((SELECT h.last_position FROM property_heads h WHERE h.property = p_property), 0),
           (SELECT e.recorded_at FROM events e WHERE e.property = p_property AND e.position = p_delivered + 1),
           clock_timestamp();
END
$$;
