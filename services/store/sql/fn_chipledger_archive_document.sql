-- chipledger_archive_document: the signed document of the archive that wrote the property's
-- anchor at p_position (NULL if none): verify checks the anchor against it, signed by a trusted
-- key, before it starts the live chain there (an anchor is otherwise rows anyone with the
-- database's superuser could write: the insiders' pass).
CREATE OR REPLACE FUNCTION chipledger_archive_document(p_property text, p_position bigint)
RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN (
    SELECT p.document FROM archive_anchors a JOIN archived_partitions p ON p.from_at = a.from_at
     WHERE a.property = p_property AND a.position = p_position);
END
$$;
