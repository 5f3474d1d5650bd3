-- chipledger_balances_sum_at: sum over every account after position p_position (decimal text: it may exceed bigint).
CREATE OR REPLACE FUNCTION chipledger_balances_sum_at(p_property text, p_position bigint)
RETURNS text
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
SELECT coalesce(sum(p.amount_cents), 0)::text FROM postings p
 WHERE p.property = p_property AND p.position <= p_position
$$;
