-- chipledger_departure: the re-buy input of a player for a game (R-REBUY-1): the most recent departure no
-- correction took back.
CREATE OR REPLACE FUNCTION chipledger_departure(p_property text, p_player_id text, p_game_key text)
RETURNS TABLE (table_id text, amount_left_cents bigint, departed_at_ms bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT d.table_id, d.amount_left_cents, d.departed_at_ms FROM player_departures d
     WHERE d.property = p_property AND d.player_id = p_player_id AND d.game_key = p_game_key;
END
$$;
