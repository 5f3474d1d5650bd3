-- chipledger_checkpoints: signed checkpoint documents kept for the property, after a position, oldest first.
CREATE OR REPLACE FUNCTION chipledger_checkpoints(p_property text, p_after_position bigint, p_limit bigint)
RETURNS TABLE ("position" bigint, refusal_seq bigint, signed_at timestamptz, document text)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
SELECT c.position, c.refusal_seq, c.signed_at, c.document FROM checkpoints c
 WHERE c.property = p_property AND c.position > p_after_position
 ORDER BY c.position, c.refusal_seq, c.signed_at LIMIT p_limit
$$;
