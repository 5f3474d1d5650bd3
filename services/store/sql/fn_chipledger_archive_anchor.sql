-- chipledger_archive_anchor: where the property's live chain starts after archived partitions: the last archived
-- position, its hash and chain format (no row: nothing archived, the chain starts at genesis).
CREATE OR REPLACE FUNCTION chipledger_archive_anchor(p_property text)
RETURNS TABLE ("position" bigint, hash bytea, chain_format smallint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT a.position, a.hash, a.chain_format FROM archive_anchors a
     WHERE a.property = p_property ORDER BY a.position DESC LIMIT 1;
END
$$;
