-- chipledger_checkpoints: signed checkpoint documents kept for the property after (position, refusal
-- sequence) (p_after_position, p_after_refusal_seq), in chain order.
CREATE OR REPLACE FUNCTION chipledger_checkpoints(p_property text, p_after_position bigint, p_after_refusal_seq bigint,
                                                  p_limit bigint)
RETURNS TABLE ("position" bigint, refusal_seq bigint, signed_at timestamptz, document text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.position, c.refusal_seq, c.signed_at, c.document FROM checkpoints c
     WHERE c.property = p_property AND (c.position, c.refusal_seq) > (p_after_position, p_after_refusal_seq)
     ORDER BY c.position, c.refusal_seq, c.signed_at LIMIT p_limit;
END
$$;
