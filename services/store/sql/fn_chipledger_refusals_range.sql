-- chipledger_refusals_range: chained refusals with p_first <= refusal_seq <= p_last, in chain order.
CREATE OR REPLACE FUNCTION chipledger_refusals_range(p_property text, p_first bigint, p_last bigint)
RETURNS TABLE (rejection_id bigint, recorded_at timestamptz, command_id text, reason_code text, rule_id text,
               numbers jsonb, detail text, actor_id text, actor_role text, device text, streams text[],
               request jsonb, refusal_seq bigint, hash bytea, request_hash bytea, player_id text,
               gaming_day date, reply bytea)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT r.rejection_id, r.recorded_at, r.command_id, r.reason_code, r.rule_id, r.numbers, r.detail, r.actor_id,
           r.actor_role, r.device, r.streams, r.request, r.refusal_seq, r.hash, r.request_hash, r.player_id,
           r.gaming_day, r.reply
      FROM rejections r
     WHERE r.property = p_property AND r.refusal_seq BETWEEN p_first AND p_last
     ORDER BY r.refusal_seq;
END
$$;
