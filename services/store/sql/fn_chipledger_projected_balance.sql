-- chipledger_projected_balance: current balance of an account in the inline projection (what appends check against).
CREATE OR REPLACE FUNCTION chipledger_projected_balance(p_property text, p_account text)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (
    SELECT coalesce((SELECT b.balance_cents FROM account_balances b
                      WHERE b.property = p_property AND b.account = p_account), 0));
END
$$;
