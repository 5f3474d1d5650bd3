-- chipledger_refusal_hashes_at: the stored refusal hash at each of the given refusal chain positions that exists.
CREATE OR REPLACE FUNCTION chipledger_refusal_hashes_at(p_property text, p_seqs bigint[])
RETURNS TABLE (refusal_seq bigint, hash bytea)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT r.refusal_seq, r.hash FROM rejections r WHERE r.property = p_property AND r.refusal_seq = ANY (p_seqs);
END
$$;
