-- chipledger_player_sessions: every player session row of the property (verify --projections).
CREATE OR REPLACE FUNCTION chipledger_player_sessions(p_property text)
RETURNS TABLE (player_id text, table_id text, seat int, game_key text, seated_at_ms bigint, seated_event_id uuid)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT s.player_id, s.table_id, s.seat, s.game_key, s.seated_at_ms, s.seated_event_id
      FROM player_sessions s WHERE s.property = p_property;
END
$$;
