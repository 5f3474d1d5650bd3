-- chipledger_hashes_at: the stored event hash at each of the given positions that exists.
CREATE OR REPLACE FUNCTION chipledger_hashes_at(p_property text, p_positions bigint[])
RETURNS TABLE ("position" bigint, hash bytea)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT e.position, e.hash FROM events e WHERE e.property = p_property AND e.position = ANY (p_positions);
END
$$;
