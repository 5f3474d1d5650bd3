-- chipledger_project_departure_reversed: a departure taken back (R-AUDIT-1), every entry of the
-- patron with that table and time, as the rules' retain. Called by
-- chipledger_apply_projection_ops; first made by migration 0003: this file is what runs.
CREATE OR REPLACE FUNCTION chipledger_project_departure_reversed(p_property text, p_player_id text,
                                                                 p_table_id text, p_departed_at_ms bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM player_departure_log
     WHERE property = p_property AND player_id = p_player_id
       AND table_id = p_table_id AND departed_at_ms = p_departed_at_ms;
END
$$;
