-- chipledger_player_session: where a player sits now, and since when.
CREATE OR REPLACE FUNCTION chipledger_player_session(p_property text, p_player_id text)
RETURNS TABLE (table_id text, seat int, game_key text, seated_at_ms bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT s.table_id, s.seat, s.game_key, s.seated_at_ms FROM player_seatings s
     WHERE s.property = p_property AND s.player_id = p_player_id;
END
$$;
