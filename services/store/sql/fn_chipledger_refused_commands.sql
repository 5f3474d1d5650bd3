-- chipledger_refused_commands: command ids taken by refusals p_first..=p_last of the refusal chain.
CREATE OR REPLACE FUNCTION chipledger_refused_commands(p_property text, p_first bigint, p_last bigint)
RETURNS TABLE (command_id text, request_hash bytea, refusal_seq bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.command_id, c.request_hash, c.refusal_seq FROM commands c
     WHERE c.property = p_property AND c.refusal_seq BETWEEN p_first AND p_last
     ORDER BY c.refusal_seq;
END
$$;
