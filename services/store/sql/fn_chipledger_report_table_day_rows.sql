-- chipledger_report_table_day_rows: the table/day report of a property, by table and day.
CREATE OR REPLACE FUNCTION chipledger_report_table_day_rows(p_property text)
RETURNS TABLE (table_id text, gaming_day text, event_count bigint, movement_count bigint, chips_in_cents bigint,
               chips_out_cents bigint, last_position bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT r.table_id, r.gaming_day, r.event_count, r.movement_count, r.chips_in_cents, r.chips_out_cents,
           r.last_position
      FROM report_table_day r WHERE r.property = p_property ORDER BY r.table_id, r.gaming_day;
END
$$;
