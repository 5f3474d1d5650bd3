-- chipledger_seat_stacks: seat stacks of a table (R-STAKE-4), by seat.
CREATE OR REPLACE FUNCTION chipledger_seat_stacks(p_property text, p_table_id text)
RETURNS TABLE (seat int, stack_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT s.seat, s.stack_cents FROM seat_stacks s WHERE s.property = p_property AND s.table_id = p_table_id
     ORDER BY s.seat;
END
$$;
