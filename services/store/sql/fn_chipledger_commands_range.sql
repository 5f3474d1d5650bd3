-- chipledger_commands_range: accepted commands whose append ended at a position in p_first..=p_last (the chain entry
-- there binds them), by position and command id, each with the SHA-256 of its stored reply (what the entry binds:
-- the verifier needs the digest, not the reply's bytes; NULL for a row without a reply).
CREATE OR REPLACE FUNCTION chipledger_commands_range(p_property text, p_first bigint, p_last bigint)
RETURNS TABLE (command_id text, request_hash bytea, append_id uuid, outcome text, reply_sha256 bytea, last_position bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.command_id, c.request_hash, c.append_id, c.outcome, sha256(c.reply), c.last_position FROM commands c
     WHERE c.property = p_property AND c.last_position BETWEEN p_first AND p_last
     ORDER BY c.last_position, c.command_id COLLATE "C";
END
$$;
