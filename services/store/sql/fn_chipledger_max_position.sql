-- chipledger_max_position: the highest stored position of the property (0 if none), whatever the head says.
CREATE OR REPLACE FUNCTION chipledger_max_position(p_property text)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN (
    SELECT coalesce(max(e.position), 0) FROM events e WHERE e.property = p_property);
END
$$;
