-- chipledger_player_in_another_case: a known patron id equal to p_player_id but for case (NULL if
-- none): a new id written so is the same patron under another spelling (R-REBUY-1).
CREATE OR REPLACE FUNCTION chipledger_player_in_another_case(p_property text, p_player_id text)
RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (
    SELECT substr(s.stream, 8) FROM streams s
     WHERE s.property = p_property AND lower(s.stream) = lower('player-' || p_player_id)
       AND s.stream <> 'player-' || p_player_id
     ORDER BY s.stream
     LIMIT 1);
END
$$;
