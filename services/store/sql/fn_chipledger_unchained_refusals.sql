-- chipledger_unchained_refusals: the first refusal of the property without a place in the refusal
-- chain recorded after the chain began (every refusal since migration 0007 is chained: such a row
-- was written outside the ledger), as (rejection_id, command_id); none if there is none.
CREATE OR REPLACE FUNCTION chipledger_unchained_refusals(p_property text)
RETURNS TABLE (rejection_id bigint, command_id text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT r.rejection_id, r.command_id
      FROM rejections r
     WHERE r.property = p_property AND r.refusal_seq IS NULL
       AND r.rejection_id > (SELECT min(c.rejection_id) FROM rejections c WHERE c.property = p_property AND c.refusal_seq IS NOT NULL)
     ORDER BY r.rejection_id
     LIMIT 1;
END
$$;
