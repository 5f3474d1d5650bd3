-- chipledger_tray_inventory: tray inventory of a table by denomination (R-CHIP-1).
CREATE OR REPLACE FUNCTION chipledger_tray_inventory(p_property text, p_table_id text)
RETURNS TABLE (denomination_cents bigint, value_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT t.denomination_cents, t.value_cents FROM tray_inventory t
     WHERE t.property = p_property AND t.table_id = p_table_id ORDER BY t.denomination_cents;
END
$$;
