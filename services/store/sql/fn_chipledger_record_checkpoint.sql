-- chipledger_record_checkpoint: keep a signed checkpoint document (a convenience copy for the fetch RPC); true if new.
CREATE OR REPLACE FUNCTION chipledger_record_checkpoint(p_property text, p_position bigint, p_refusal_seq bigint, p_key_id text, p_signed_at timestamptz,
    p_document text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    v_kept int;
BEGIN
    INSERT INTO checkpoints (property, position, refusal_seq, key_id, signed_at, document)
    VALUES (p_property, p_position, p_refusal_seq, p_key_id, p_signed_at, p_document)
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS v_kept = ROW_COUNT;
    RETURN v_kept = 1;
END
$$;
