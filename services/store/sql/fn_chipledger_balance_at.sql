-- chipledger_balance_at: balance of an account after position p_position, from the postings: what archived
-- partitions carried (archive_balances) plus the live postings up to the position. A position inside an archive
-- cannot be answered from the live log: CL008 with the archive's last position.
CREATE OR REPLACE FUNCTION chipledger_balance_at(p_property text, p_account text, p_position bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM chipledger_refuse_archived_position(p_property, p_position);
    RETURN (SELECT coalesce(sum(b.balance_cents), 0) FROM archive_balances b
             WHERE b.property = p_property AND b.account = p_account)
         + (SELECT coalesce(sum(p.amount_cents), 0) FROM postings p
             WHERE p.property = p_property AND p.account = p_account AND p.position <= p_position);
END
$$;
