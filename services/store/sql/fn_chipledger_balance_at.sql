-- chipledger_balance_at: balance of an account after position p_position, from the postings.
CREATE OR REPLACE FUNCTION chipledger_balance_at(p_property text, p_account text, p_position bigint)
RETURNS bigint
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
SELECT coalesce(sum(p.amount_cents), 0)::bigint FROM postings p
 WHERE p.property = p_property AND p.account = p_account AND p.position <= p_position
$$;
