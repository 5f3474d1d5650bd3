-- chipledger_commands_range: accepted commands whose append ended at a position in p_first..=p_last (the chain entry
-- there binds them), by position and command id.
CREATE OR REPLACE FUNCTION chipledger_commands_range(p_property text, p_first bigint, p_last bigint)
RETURNS TABLE (command_id text, request_hash bytea, append_id uuid, outcome text, reply bytea, last_position bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.command_id, c.request_hash, c.append_id, c.outcome, c.reply, c.last_position FROM commands c
     WHERE c.property = p_property AND c.last_position BETWEEN p_first AND p_last
     ORDER BY c.last_position, c.command_id COLLATE "C";
END
$$;
