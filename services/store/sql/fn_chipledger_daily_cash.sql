-- chipledger_daily_cash: cash in and out of a patron on a gaming day (R-AUDIT-4).
CREATE OR REPLACE FUNCTION chipledger_daily_cash(p_property text, p_player_id text, p_gaming_day date)
RETURNS TABLE (cash_in_cents bigint, cash_out_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT d.cash_in_cents, d.cash_out_cents FROM patron_daily_cash d
     WHERE d.property = p_property AND d.player_id = p_player_id AND d.gaming_day = p_gaming_day;
END
$$;
