-- chipledger_unanchored_archive_balances: archive balance rows of the property with no anchor of their
-- archive for it (none when sound: an archive writes both): verify names them, balance reads leave them out.
CREATE OR REPLACE FUNCTION chipledger_unanchored_archive_balances(p_property text)
RETURNS bigint
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (SELECT count(*) FROM archive_balances b
             WHERE b.property = p_property
               AND NOT EXISTS (SELECT 1 FROM archive_anchors a WHERE a.property = b.property AND a.from_at = b.from_at));
END
$$;
