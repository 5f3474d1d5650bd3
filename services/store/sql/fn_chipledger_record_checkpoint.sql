-- chipledger_record_checkpoint: keep a signed checkpoint document (a convenience copy for the fetch RPC); true if new,
-- false if a document is kept for those heads and key already (the caller compares it).
-- The document is checked for the shape every reader needs (SignedCheckpoint, checkpoint.rs): a
-- JSON object whose checkpoint names this property, position, refusal sequence and key, with hex
-- hashes, public key and signature. The signature is not checked here (the readers check it
-- against the keys they trust); a document nobody could read is refused (CL005), so a holder of
-- the application role cannot keep a row that breaks every later listing (rows are never deleted).
CREATE OR REPLACE FUNCTION chipledger_record_checkpoint(p_property text, p_position bigint, p_refusal_seq bigint, p_key_id text, p_signed_at timestamptz,
    p_document text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    v_kept int;
    v_doc  jsonb;
    v_cp   jsonb;
    v_key_of text;
BEGIN
    BEGIN
        v_doc := p_document::jsonb;
    EXCEPTION WHEN others THEN
        v_doc := NULL;
    END;
    v_cp := CASE WHEN jsonb_typeof(v_doc) = 'object' THEN v_doc->'checkpoint' END;
    -- The key id is its public key's (the first 8 bytes of its SHA-256, in hex).
    IF coalesce(v_doc->>'public_key', '') ~ '^[0-9a-f]{64}$' THEN
        v_key_of := substr(encode(sha256(decode(v_doc->>'public_key', 'hex')), 'hex'), 1, 16);
    END IF;
    IF jsonb_typeof(v_cp) IS DISTINCT FROM 'object'
       OR v_cp->>'type' IS DISTINCT FROM 'chipledger.checkpoint'
       OR v_cp->>'property' IS DISTINCT FROM p_property
       OR jsonb_typeof(v_cp->'position') IS DISTINCT FROM 'number' OR v_cp->>'position' IS DISTINCT FROM p_position::text
       OR jsonb_typeof(v_cp->'refusal_seq') IS DISTINCT FROM 'number' OR v_cp->>'refusal_seq' IS DISTINCT FROM p_refusal_seq::text
       OR v_cp->>'key_id' IS DISTINCT FROM p_key_id
       OR jsonb_typeof(v_cp->'signed_at_ms') IS DISTINCT FROM 'number' OR (v_cp->>'signed_at_ms') !~ '^-?[0-9]{1,18}$'
       OR jsonb_typeof(v_cp->'chain_format') IS DISTINCT FROM 'number' OR (v_cp->>'chain_format') !~ '^[0-9]{1,4}$'
       OR v_cp->>'key_id' IS DISTINCT FROM v_key_of
       OR coalesce(v_cp->>'hash', '') !~ '^[0-9a-f]{64}$'
       OR coalesce(v_cp->>'refusal_hash', '') !~ '^[0-9a-f]{64}$'
       OR coalesce(v_doc->>'public_key', '') !~ '^[0-9a-f]{64}$'
       OR coalesce(v_doc->>'signature', '') !~ '^[0-9a-f]{128}$' THEN
        RAISE EXCEPTION 'chipledger: not a checkpoint document' USING ERRCODE = 'CL005',
            DETAIL = json_build_object('reason', 'a kept checkpoint is a signed checkpoint document of this property, position, refusal sequence and key')::text;
    END IF;
    -- The hashes are the log's at those positions (the insider pass: the application role kept
    -- documents with a made-up signature at positions the head had not reached, and the server's
    -- own checkpoints there were never kept, so every later fetch was refused).
    IF (p_position = 0 AND v_cp->>'hash' <> repeat('0', 64))
       OR (p_position <> 0 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.property = p_property AND e.position = p_position
                                                                     AND e.hash = decode(v_cp->>'hash', 'hex')))
       OR (p_refusal_seq = 0 AND v_cp->>'refusal_hash' <> repeat('0', 64))
       OR (p_refusal_seq <> 0 AND NOT EXISTS (SELECT 1 FROM rejections r WHERE r.property = p_property AND r.refusal_seq = p_refusal_seq
                                                                          AND r.hash = decode(v_cp->>'refusal_hash', 'hex'))) THEN
        RAISE EXCEPTION 'chipledger: not a checkpoint of this log' USING ERRCODE = 'CL005',
            DETAIL = json_build_object('reason', 'a kept checkpoint names the hashes the log holds at its position and refusal sequence',
                                       'position', p_position, 'refusal_seq', p_refusal_seq)::text;
    END IF;
    INSERT INTO checkpoints (property, position, refusal_seq, key_id, signed_at, document)
    VALUES (p_property, p_position, p_refusal_seq, p_key_id, p_signed_at, p_document)
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS v_kept = ROW_COUNT;
    RETURN v_kept = 1;
END
$$;
