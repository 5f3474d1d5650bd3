-- chipledger_report_table_day_apply: add a page of rows to the table/day report and move its checkpoint from p_from to
-- p_to, in one transaction; refused if the checkpoint is not at p_from (a concurrent catch-up).
CREATE OR REPLACE FUNCTION chipledger_report_table_day_apply(p_property text, p_from bigint, p_to bigint, p_table_ids text[], p_days text[], p_event_count bigint[],
    p_movement_count bigint[], p_chips_in bigint[], p_chips_out bigint[], p_last_position bigint[])
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    UPDATE projection_checkpoints c SET position = p_to
     WHERE c.projection = 'report_table_day' AND c.property = p_property AND c.position = p_from;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'chipledger: report checkpoint moved' USING ERRCODE = 'serialization_failure';
    END IF;
    INSERT INTO report_table_day AS r (property, table_id, gaming_day, event_count, movement_count,
                                      chips_in_cents, chips_out_cents, last_position)
    SELECT p_property, u.* FROM unnest(p_table_ids, p_days, p_event_count, p_movement_count, p_chips_in,
                                         p_chips_out, p_last_position) AS u
    ON CONFLICT (property, table_id, gaming_day) DO UPDATE SET
       event_count = r.event_count + EXCLUDED.event_count,
       movement_count = r.movement_count + EXCLUDED.movement_count,
       chips_in_cents = r.chips_in_cents + EXCLUDED.chips_in_cents,
       chips_out_cents = r.chips_out_cents + EXCLUDED.chips_out_cents,
       last_position = EXCLUDED.last_position;
END
$$;
