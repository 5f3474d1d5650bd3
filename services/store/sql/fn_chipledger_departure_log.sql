-- chipledger_departure_log: every kept departure of the property, by player and order (verify --projections).
CREATE OR REPLACE FUNCTION chipledger_departure_log(p_property text)
RETURNS TABLE (player_id text, seq bigint, game_key text, table_id text, amount_left_cents bigint, departed_at_ms bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT d.player_id, d.seq, d.game_key, d.table_id, d.amount_left_cents, d.departed_at_ms
      FROM player_departure_log d WHERE d.property = p_property;
END
$$;
