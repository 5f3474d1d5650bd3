-- chipledger_report_table_day_checkpoint: the table/day report's checkpoint (created at 0), locked until the end of the
-- transaction when p_lock (one catch-up at a time).
CREATE OR REPLACE FUNCTION chipledger_report_table_day_checkpoint(p_property text, p_lock boolean)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    v_position bigint;
BEGIN
    INSERT INTO projection_checkpoints (projection, property, position) VALUES ('report_table_day', p_property, 0)
    ON CONFLICT (projection, property) DO NOTHING;
    IF p_lock THEN
        SELECT c.position INTO v_position FROM projection_checkpoints c
         WHERE c.projection = 'report_table_day' AND c.property = p_property FOR UPDATE;
    ELSE
        SELECT c.position INTO v_position FROM projection_checkpoints c
         WHERE c.projection = 'report_table_day' AND c.property = p_property;
    END IF;
    RETURN v_position;
END
$$;
