-- chipledger_player_in_another_case: a known patron id equal to p_player_id but for case (NULL if
-- none): a new id written so is the same patron under another spelling (R-REBUY-1). The one-id form
-- of chipledger_players_in_another_case, which holds the query.
CREATE OR REPLACE FUNCTION chipledger_player_in_another_case(p_property text, p_player_id text)
RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (SELECT p.known FROM chipledger_players_in_another_case(p_property, ARRAY[p_player_id]) p);
END
$$;
