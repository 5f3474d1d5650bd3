-- chipledger_postings_range: postings of positions p_first..=p_last, by position and posting index.
CREATE OR REPLACE FUNCTION chipledger_postings_range(p_property text, p_first bigint, p_last bigint)
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
     WHERE p.property = p_property AND p.position BETWEEN p_first AND p_last
     ORDER BY p.position, p.posting_index;
END
$$;
