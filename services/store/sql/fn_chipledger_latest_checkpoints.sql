-- chipledger_latest_checkpoints: the last p_limit signed checkpoint documents kept for the property,
-- latest first (what a restarted server checks the log against before it signs again).
CREATE OR REPLACE FUNCTION chipledger_latest_checkpoints(p_property text, p_limit bigint)
RETURNS TABLE (document text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.document FROM checkpoints c
     WHERE c.property = p_property
     ORDER BY c.position DESC, c.refusal_seq DESC, c.signed_at DESC LIMIT p_limit;
END
$$;
