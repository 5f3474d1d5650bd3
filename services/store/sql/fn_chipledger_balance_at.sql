-- chipledger_balance_at: balance of an account after position p_position, from the postings: what archived
-- partitions carried (archive_balances) plus the live postings up to the position. A position inside an archive
-- cannot be answered from the live log: CL008 with the archive's last position. Carried balances count only
-- with an anchor of their archive for the property (rows a superuser added had moved a pocket by $5,000, unseen:
-- the night's pass; verify names such rows).
CREATE OR REPLACE FUNCTION chipledger_balance_at(p_property text, p_account text, p_position bigint)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM chipledger_refuse_archived_position(p_property, p_position);
    RETURN (SELECT coalesce(sum(b.balance_cents), 0) FROM archive_balances b
             WHERE b.property = p_property AND b.account = p_account
               AND EXISTS (SELECT 1 FROM archive_anchors a WHERE a.property = b.property AND a.from_at = b.from_at))
         + (SELECT coalesce(sum(p.amount_cents), 0) FROM postings p
             WHERE p.property = p_property AND p.account = p_account AND p.position <= p_position);
END
$$;
