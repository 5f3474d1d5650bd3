-- chipledger_account_balances: every account balance of the property's inline projection (verify --projections).
CREATE OR REPLACE FUNCTION chipledger_account_balances(p_property text)
RETURNS TABLE (account text, balance_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT b.account, b.balance_cents FROM account_balances b WHERE b.property = p_property;
END
$$;
