-- chipledger_credit_lines: every credit line and markers outstanding of the property (verify --projections).
CREATE OR REPLACE FUNCTION chipledger_credit_lines(p_property text)
RETURNS TABLE (player_id text, limit_cents bigint, outstanding_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.player_id, c.limit_cents, c.outstanding_cents FROM credit_lines c WHERE c.property = p_property;
END
$$;
