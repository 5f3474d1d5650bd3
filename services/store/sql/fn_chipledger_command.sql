-- chipledger_command: what a command id is: its request hash and, accepted, its outcome and reply, or, refused,
-- its place in the refusal chain.
CREATE OR REPLACE FUNCTION chipledger_command(p_property text, p_command_id text)
RETURNS TABLE (request_hash bytea, outcome text, reply bytea, refusal_seq bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.request_hash, c.outcome, c.reply, c.refusal_seq FROM commands c
     WHERE c.property = p_property AND c.command_id = p_command_id;
END
$$;
