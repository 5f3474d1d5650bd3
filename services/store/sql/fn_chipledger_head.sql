-- chipledger_head: the heads of the property's event chain and refusal chain (no row: nothing recorded yet).
CREATE OR REPLACE FUNCTION chipledger_head(p_property text)
RETURNS TABLE (last_position bigint, last_hash bytea, last_recorded_at timestamptz, last_refusal_seq bigint,
               last_refusal_hash bytea)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT h.last_position, h.last_hash, h.last_recorded_at, h.last_refusal_seq, h.last_refusal_hash
      FROM property_heads h WHERE h.property = p_property;
END
$$;
