-- chipledger_jackpot_day: every table's jackpot fund over a gaming day (R-RAKE-2): what it held
-- when the day began, the drops into it and the payouts out of it that day, what it held at the
-- end, from the postings of the log (gaming days compared as text: YYYY-MM-DD sorts by date).
-- A correction's postings net against what they reverse: back into the fund, a payout taken back
-- (less paid); out of it, a drop taken back (fewer drops). A corrected payout had been reported
-- as a drop (the cage pass).
-- For report::jackpot_day (main): `SELECT * FROM chipledger_jackpot_day($1, $2)`.
CREATE OR REPLACE FUNCTION chipledger_jackpot_day(p_property text, p_gaming_day text)
RETURNS TABLE (table_id text, opening_cents bigint, drops_cents bigint, paid_cents bigint, closing_cents bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH day AS (
        SELECT split_part(p.account, '/', 2) AS table_id, p.amount_cents, e.metadata ->> 'gaming_day' AS gaming_day,
               e.event_type = 'Corrected' AS corrects
          FROM postings p JOIN events e ON e.property = p.property AND e.position = p.position
         WHERE p.property = p_property AND p.account LIKE 'table/%/jackpot' AND e.metadata ->> 'gaming_day' <= p_gaming_day)
    SELECT d.table_id,
           coalesce(sum(d.amount_cents) FILTER (WHERE d.gaming_day < p_gaming_day), 0)::bigint,
           coalesce(sum(d.amount_cents) FILTER (WHERE d.gaming_day = p_gaming_day
                                                  AND (d.amount_cents > 0) <> d.corrects), 0)::bigint,
           coalesce(-sum(d.amount_cents) FILTER (WHERE d.gaming_day = p_gaming_day
                                                   AND (d.amount_cents < 0) <> d.corrects), 0)::bigint,
           coalesce(sum(d.amount_cents), 0)::bigint
      FROM day d GROUP BY d.table_id ORDER BY d.table_id;
END
$$;
