-- chipledger_balances_sum_at: sum over all accounts after position p_position (zero whenever the ledger is sound):
-- what archived partitions carried (with an anchor of their archive, as chipledger_balance_at) plus the live
-- postings; CL008 for a position inside an archive.
CREATE OR REPLACE FUNCTION chipledger_balances_sum_at(p_property text, p_position bigint)
RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM chipledger_refuse_archived_position(p_property, p_position);
    RETURN ((SELECT coalesce(sum(b.balance_cents), 0) FROM archive_balances b
              WHERE b.property = p_property
                AND EXISTS (SELECT 1 FROM archive_anchors a WHERE a.property = b.property AND a.from_at = b.from_at))
          + (SELECT coalesce(sum(p.amount_cents), 0) FROM postings p
              WHERE p.property = p_property AND p.position <= p_position))::text;
END
$$;
