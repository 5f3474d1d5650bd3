-- chipledger_report_table_day_reset: drop the property's table/day report rows and put its checkpoint back to 0 (rebuild).
CREATE OR REPLACE FUNCTION chipledger_report_table_day_reset(p_property text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO projection_checkpoints (projection, property, position) VALUES ('report_table_day', p_property, 0)
    ON CONFLICT (projection, property) DO UPDATE SET position = 0;
    DELETE FROM report_table_day WHERE property = p_property;
END
$$;
