-- chipledger_properties: every property with a head: its event and refusal chain positions.
CREATE OR REPLACE FUNCTION chipledger_properties()
RETURNS TABLE (property text, last_position bigint, last_refusal_seq bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT h.property, h.last_position, h.last_refusal_seq FROM property_heads h ORDER BY h.property;
END
$$;
