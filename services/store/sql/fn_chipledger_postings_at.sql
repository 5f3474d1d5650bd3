-- chipledger_postings_at: postings of the given positions, by position and posting index.
CREATE OR REPLACE FUNCTION chipledger_postings_at(p_property text, p_positions bigint[])
RETURNS TABLE ("position" bigint, account text, amount_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT p.position, p.account, p.amount_cents FROM postings p
     WHERE p.property = p_property AND p.position = ANY (p_positions)
     ORDER BY p.position, p.posting_index;
END
$$;
