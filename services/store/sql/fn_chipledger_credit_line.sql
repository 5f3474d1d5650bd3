-- chipledger_credit_line: a player's credit line and markers outstanding (R-MARK-1).
CREATE OR REPLACE FUNCTION chipledger_credit_line(p_property text, p_player_id text)
RETURNS TABLE (limit_cents bigint, outstanding_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.limit_cents, c.outstanding_cents FROM credit_lines c
     WHERE c.property = p_property AND c.player_id = p_player_id;
END
$$;
