-- chipledger_project_departure: a departure (R-REBUY-1) appended to the patron's list, keeping the
-- 32 most recent as the rules do (they drop the oldest before pushing when 32 are held). Two
-- writers of one patron without the player stream lock meet on the primary key
-- (unique_violation: the store retries). Called by chipledger_apply_projection_ops; first made by
-- migration 0003, which rebuilt the list with it: this file is what runs.
CREATE OR REPLACE FUNCTION chipledger_project_departure(p_property text, p_player_id text, p_game_key text,
                                             p_table_id text, p_amount_left_cents bigint,
                                             p_departed_at_ms bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_seq bigint;
BEGIN
    SELECT coalesce(max(seq), 0) + 1 INTO v_seq
      FROM player_departure_log WHERE property = p_property AND player_id = p_player_id;
    INSERT INTO player_departure_log (property, player_id, seq, game_key, table_id, amount_left_cents, departed_at_ms)
    VALUES (p_property, p_player_id, v_seq, p_game_key, p_table_id, p_amount_left_cents, p_departed_at_ms);
    IF v_seq > 32 THEN
        DELETE FROM player_departure_log l
         WHERE l.property = p_property AND l.player_id = p_player_id
           AND l.seq < (SELECT min(k.seq) FROM (SELECT seq FROM player_departure_log
                                                 WHERE property = p_property AND player_id = p_player_id
                                                 ORDER BY seq DESC LIMIT 32) k);
    END IF;
END
$$;
