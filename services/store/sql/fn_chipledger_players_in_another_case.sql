-- chipledger_players_in_another_case: for each of p_player_ids, a known patron id equal to it but for
-- case (NULL if none): chipledger_player_in_another_case for a whole submission's new patrons in one call.
CREATE OR REPLACE FUNCTION chipledger_players_in_another_case(p_property text, p_player_ids text[])
RETURNS TABLE (player_id text, known text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT p.id, (SELECT substr(s.stream, 8) FROM streams s
                   WHERE s.property = p_property AND lower(s.stream) = lower('player-' || p.id)
                     AND s.stream <> 'player-' || p.id
                   ORDER BY s.stream LIMIT 1)
      FROM unnest(p_player_ids) AS p(id);
END
$$;
