-- chipledger_position_at: the last position recorded at or before p_at (recorded_at is monotone in position), 0 if none.
CREATE OR REPLACE FUNCTION chipledger_position_at(p_property text, p_at timestamptz)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (
    SELECT coalesce((SELECT e.position FROM events e WHERE e.property = p_property AND e.recorded_at <= p_at
                      ORDER BY e.recorded_at DESC, e.position DESC LIMIT 1), 0));
END
$$;
