-- chipledger_command_count: how many command ids the property has taken: accepted (bound to a live position, after
-- the archive anchor if a partition was archived) and refused.
CREATE OR REPLACE FUNCTION chipledger_command_count(p_property text)
RETURNS TABLE (accepted bigint, refused bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT count(*) FILTER (WHERE c.refusal_seq IS NULL
                              AND c.last_position > coalesce((SELECT max(a.position) FROM archive_anchors a
                                                               WHERE a.property = p_property), 0)),
           count(*) FILTER (WHERE c.refusal_seq IS NOT NULL)
      FROM commands c WHERE c.property = p_property;
END
$$;
