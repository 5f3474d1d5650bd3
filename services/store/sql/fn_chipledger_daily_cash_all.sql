-- chipledger_daily_cash_all: every patron's cash totals per gaming day (verify --projections).
CREATE OR REPLACE FUNCTION chipledger_daily_cash_all(p_property text)
RETURNS TABLE (player_id text, gaming_day text, cash_in_cents bigint, cash_out_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT d.player_id, to_char(d.gaming_day, 'YYYY-MM-DD'), d.cash_in_cents, d.cash_out_cents
      FROM patron_daily_cash d WHERE d.property = p_property;
END
$$;
